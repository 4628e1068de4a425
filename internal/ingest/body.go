package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// MaxBody is the ingestion body limit in bytes (CONTRACT §1), announced in
// every answer's Ping-Body-Limit header as Healthchecks does (runitor then
// sends the last MaxBody bytes of a job's output). A longer body is kept
// cut to it, never dropped.
const MaxBody = beet.MaxMessageLen

// parsedBody is what a POST body yields: a value, a message, or a problem
// to note.
type parsedBody struct {
	value   *float64
	message string
	problem beet.ProblemKind // "" when the body was fine
	detail  string
}

// parseBody reads a POST body, the same on every path (the plain ping and
// the signals):
//
//   - a JSON object gives its "value" (a finite number, CONTRACT §1) and
//     its "message" string; an object with neither field, or whose
//     "message" is no string (an object, null, a number), is a job's
//     output, and the whole body is the message;
//   - anything else (a job's output from runitor or curl --data-raw) is the
//     event's message, and no problem, unless the request declared JSON
//     (Content-Type application/json or +json) and the body looks like
//     JSON: then a value was meant and is lost, which is worth noting.
//     Plain text sent as JSON is a client's habit (py-healthchecks.io
//     sends its log text so), not a lost value;
//   - a body over MaxBody was cut to it by the reader (cut is true): its
//     text is the message, without a value.
func parseBody(body []byte, cut, declaredJSON bool) parsedBody {
	// A byte order mark (Windows PowerShell's Out-File writes one before
	// UTF-8, and curl --data-binary @file sends it) is no part of the JSON:
	// RFC 8259 lets a parser ignore it.
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return parsedBody{}
	}
	if cut {
		pb := parsedBody{message: cleanMessage(body)}
		if declaredJSON {
			pb.problem, pb.detail = beet.ProblemBodyTooBig,
				fmt.Sprintf("body over %d bytes; its first %d bytes are the message, without a value", MaxBody, MaxBody)
		}
		return pb
	}
	if body[0] != '{' || !json.Valid(body) {
		pb := parsedBody{message: cleanMessage(body)}
		if declaredJSON && looksLikeJSON(body) {
			pb.problem, pb.detail = beet.ProblemBadBody, "body sent as JSON is not a JSON object; it is the message, without a value"
		}
		return pb
	}
	var obj struct {
		Value   json.RawMessage `json:"value"`
		Message json.RawMessage `json:"message"`
	}
	json.Unmarshal(body, &obj) // valid JSON: only a field of another type fails, and its RawMessage is still set
	var pb parsedBody
	var m string
	switch {
	case obj.Message != nil && obj.Message[0] == '"' && json.Unmarshal(obj.Message, &m) == nil:
		pb.message = cleanMessage(m)
	case obj.Message != nil:
		// {"message": {"error": "disk full"}}, {"message": null, …}: the
		// job's output is whole, never lost for a field's type.
		pb.message = cleanMessage(body)
	case obj.Value == nil && !emptyObject(body):
		pb.message = cleanMessage(body) // {"status": "ok", …}: a job printed JSON
	}
	if obj.Value == nil {
		return pb
	}
	raw := obj.Value
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		pb.problem, pb.detail = beet.ProblemBadValue, fmt.Sprintf("value is %s, not a number; event recorded without a value", jsonKind(raw[0]))
		return pb
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		pb.problem, pb.detail = beet.ProblemBadValue, fmt.Sprintf("value %.40s is not a finite number; event recorded without a value", raw)
		return pb
	}
	pb.value = &v
	return pb
}

// emptyObject reports whether a valid JSON object has no members.
func emptyObject(obj []byte) bool {
	return len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
}

// declaresJSON reports whether a Content-Type names JSON
// (application/json, or a +json type), without allocating.
func declaresJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "application/json") ||
		len(mt) > 5 && strings.EqualFold(mt[len(mt)-5:], "+json")
}

func jsonKind(first byte) string {
	switch first {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "not a number"
}

// cleanMessage makes text safe to store and show: valid UTF-8 (invalid
// bytes become U+FFFD), no NUL bytes (PostgreSQL refuses them), at most
// beet.MaxMessageLen bytes cut on a character boundary, trimmed.
func cleanMessage[T string | []byte](text T) string {
	s := string(text)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if len(s) > beet.MaxMessageLen {
		n := beet.MaxMessageLen
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.TrimSpace(s)
}

// looksLikeJSON: the body is JSON, or starts as JSON would (an object,
// an array or a string cut or broken).
func looksLikeJSON(body []byte) bool {
	switch body[0] {
	case '{', '[', '"':
		return true
	}
	return json.Valid(body)
}
