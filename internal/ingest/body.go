package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/beethq/beet"
)

// MaxBody is the largest POST body read for a value (CONTRACT §1). A larger
// body still records the event, without a value.
const MaxBody = 4 << 10

// parsedBody is what a POST body yields: a value, or a problem to note.
type parsedBody struct {
	value   *float64
	problem beet.ProblemKind // "" when the body was fine
	detail  string
}

// parseBody reads an optional {"value": <number>} object. An empty body
// and {} carry no value; unknown fields are ignored; anything else is a
// problem, and the event is still recorded without a value.
func parseBody(body []byte) parsedBody {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return parsedBody{}
	}
	if len(body) > MaxBody {
		return parsedBody{problem: beet.ProblemBodyTooBig, detail: fmt.Sprintf("body over %d bytes; event recorded without a value", MaxBody)}
	}
	if body[0] != '{' {
		return parsedBody{problem: beet.ProblemBadBody, detail: "body is not a JSON object; event recorded without a value"}
	}
	var obj struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return parsedBody{problem: beet.ProblemBadBody, detail: "body is not valid JSON; event recorded without a value"}
	}
	if obj.Value == nil {
		return parsedBody{}
	}
	raw := obj.Value
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return parsedBody{problem: beet.ProblemBadValue, detail: fmt.Sprintf("value is %s, not a number; event recorded without a value", jsonKind(raw[0]))}
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return parsedBody{problem: beet.ProblemBadValue, detail: fmt.Sprintf("value %.40s is not a finite number; event recorded without a value", raw)}
	}
	return parsedBody{value: &v}
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
