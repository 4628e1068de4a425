package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// signal is what the path after the token asks for: {token} pings,
// {token}/start, /fail, /log, and /{exit code} (0-255, 0 is success).
type signal struct {
	kind beet.EventKind
	code *int
}

// signalOf reads the path after the token ("" for the plain endpoint). ok
// is false for anything else ("/stat", "/256", "/start/x").
func signalOf(suffix string) (s signal, ok bool) {
	switch suffix {
	case "":
		return signal{kind: beet.KindPing}, true
	case "start":
		return signal{kind: beet.KindStart}, true
	case "fail":
		return signal{kind: beet.KindFail}, true
	case "log":
		return signal{kind: beet.KindLog}, true
	}
	if len(suffix) > 3 {
		return signal{}, false
	}
	code := 0
	for i := 0; i < len(suffix); i++ {
		c := suffix[i]
		if c < '0' || c > '9' {
			return signal{}, false
		}
		code = 10*code + int(c-'0')
	}
	if code > beet.MaxExitCode {
		return signal{}, false
	}
	s.code = &code
	s.kind = beet.KindFail
	if code == 0 {
		s.kind = beet.KindPing
	}
	return s, true
}

// parseSignalBody reads a signal's POST body. Text is the event's message
// (a job's last lines of output, an error). A JSON object is read as the
// ping's body is ({"value": 12.5}), and its "message" string, if any, is
// the message. A body over MaxBody is a problem, and the event is recorded
// without a message or value, as a ping's would be.
func parseSignalBody(body []byte) (pb parsedBody, message string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return parsedBody{}, ""
	}
	if len(trimmed) > MaxBody {
		return parsedBody{problem: beet.ProblemBodyTooBig,
			detail: fmt.Sprintf("body over %d bytes; event recorded without a message or value", MaxBody)}, ""
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		var obj struct {
			Message json.RawMessage `json:"message"`
		}
		json.Unmarshal(trimmed, &obj)
		var m string
		if json.Unmarshal(obj.Message, &m) == nil {
			message = m
		}
		return parseBody(trimmed), cleanMessage(message)
	}
	return parsedBody{}, cleanMessage(string(trimmed))
}

// cleanMessage makes text safe to store and show: valid UTF-8, no NUL
// bytes (PostgreSQL refuses them), at most beet.MaxMessageLen bytes.
func cleanMessage(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= beet.MaxMessageLen {
		return s
	}
	n := beet.MaxMessageLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
