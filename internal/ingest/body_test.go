package ingest

import (
	"bytes"
	"compress/gzip"
	"image/gif"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beethq/beet"
)

func TestTransparentGIF(t *testing.T) {
	if len(transparentGIF) != 43 {
		t.Fatalf("GIF is %d bytes, want 43", len(transparentGIF))
	}
	img, err := gif.Decode(bytes.NewReader(transparentGIF))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("GIF is %dx%d", b.Dx(), b.Dy())
	}
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Fatalf("pixel alpha %d, want transparent", a)
	}
}

func TestParseBody(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	long := strings.Repeat("x", MaxBody)
	for _, c := range []struct {
		body     string
		cut      bool // the reader cut it at MaxBody
		declared bool // Content-Type: application/json
		value    *float64
		message  string
		problem  beet.ProblemKind
	}{
		{"", false, true, nil, "", ""},
		{"  \n", false, true, nil, "", ""},
		{"{}", false, true, nil, "", ""},
		{"{ }", false, false, nil, "", ""},
		{`{"value": 12.5}`, false, true, v(12.5), "", ""},
		{`{"value": 12.5}`, false, false, v(12.5), "", ""},        // sendBeacon's text/plain
		{"\xef\xbb\xbf{\"value\": 9}", false, true, v(9), "", ""}, // a file of Windows PowerShell's Out-File: a BOM first
		{`{"value": -3e2, "note": "x"}`, false, true, v(-300), "", ""},
		{`{"value": 0}`, false, true, v(0), "", ""},
		{`{"value": 3, "message": "3 rows"}`, false, true, v(3), "3 rows", ""},
		{`{"other": 1}`, false, true, nil, `{"other": 1}`, ""}, // a job that prints JSON
		// A "message" that is no string: the body whole is the message.
		{`{"message": 7}`, false, true, nil, `{"message": 7}`, ""},
		{`{"status":"fail","message":{"error":"disk full"}}`, false, false, nil, `{"status":"fail","message":{"error":"disk full"}}`, ""},
		{`{"message":null,"status":"x"}`, false, true, nil, `{"message":null,"status":"x"}`, ""},
		{`{"value": 2, "message": ["a","b"]}`, false, true, v(2), `{"value": 2, "message": ["a","b"]}`, ""},
		{`{"value": "2", "message": false}`, false, true, nil, `{"value": "2", "message": false}`, beet.ProblemBadValue},
		{`{"value": "12"}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": true}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": null}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": [1]}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": {"a":1}}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": 1e400}`, false, true, nil, "", beet.ProblemBadValue},
		{`{"value": -1e400}`, false, true, nil, "", beet.ProblemBadValue},
		// Text is the message; a problem only when JSON was declared and the body looks like it.
		{"backup done: 3 files\n", false, false, nil, "backup done: 3 files", ""},
		{`[1,2]`, false, false, nil, "[1,2]", ""},
		{`[1,2]`, false, true, nil, "[1,2]", beet.ProblemBadBody},
		{`"value"`, false, true, nil, `"value"`, beet.ProblemBadBody},
		{`{"value": 1`, false, true, nil, `{"value": 1`, beet.ProblemBadBody},
		{`12.5`, false, true, nil, "12.5", beet.ProblemBadBody},
		// Plain text sent as JSON (py-healthchecks.io's log text) is a message, no problem.
		{`value=1`, false, true, nil, "value=1", ""},
		{"Backup finished in 3 s\n2 files", false, true, nil, "Backup finished in 3 s\n2 files", ""},
		{`{"value": 1}{}`, false, true, nil, `{"value": 1}{}`, beet.ProblemBadBody},
		{"{\"level\":\"info\"}\n{\"level\":\"warn\"}", false, false, nil, "{\"level\":\"info\"}\n{\"level\":\"warn\"}", ""},
		{"a\x00b\xff", false, false, nil, "ab\uFFFD", ""},
		// Over the limit: kept cut, never dropped.
		{long, true, false, nil, long, ""},
		{`{"value": 1, "pad": "` + long[:MaxBody-21], true, true, nil, `{"value": 1, "pad": "` + long[:MaxBody-21], beet.ProblemBodyTooBig},
	} {
		got := parseBody([]byte(c.body), c.cut, c.declared)
		if got.problem != c.problem || (got.value == nil) != (c.value == nil) || (got.value != nil && *got.value != *c.value) || got.message != c.message {
			t.Errorf("parseBody(%.60q, cut %v, json %v) = value %v message %.40q problem %q, want %v %.40q %q",
				c.body, c.cut, c.declared, got.value, got.message, got.problem, c.value, c.message, c.problem)
		}
		if got.problem != "" && (got.detail == "" || len(got.detail) > beet.MaxProblemDetailLen) {
			t.Errorf("parseBody(%.60q): detail %q", c.body, got.detail)
		}
	}
}

// FuzzParseBody checks that no body panics, a value is always finite, a
// message is valid UTF-8 without NUL within the limit, and every problem
// comes with a short detail.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{"", "{}", `{"value": 12.5}`, `{"value": "x"}`, `{"value": 1e400}`, "[", `{"value":-0}`, "\xff\xfe", `{"value": 1.7976931348623157e308}`,
		"backup done\n", `{"message": "ok", "value": 1}`, `{"a": 1}`, `{"status": "fail", "message": {"error": "disk full"}}`} {
		f.Add([]byte(s), false, false)
	}
	f.Fuzz(func(t *testing.T, body []byte, cut, declared bool) {
		got := parseBody(body, cut, declared)
		if got.value != nil && (math.IsInf(*got.value, 0) || math.IsNaN(*got.value)) {
			t.Fatalf("non-finite value %v from %q", *got.value, body)
		}
		if got.value != nil && got.problem != "" {
			t.Fatalf("both a value and a problem from %q", body)
		}
		if got.problem != "" && (got.detail == "" || len(got.detail) > beet.MaxProblemDetailLen) {
			t.Fatalf("problem %q with detail %q", got.problem, got.detail)
		}
		if !utf8.ValidString(got.message) || strings.Contains(got.message, "\x00") || len(got.message) > beet.MaxMessageLen {
			t.Fatalf("message %q from %q", got.message, body)
		}
		if !declared && got.problem == beet.ProblemBadBody {
			t.Fatalf("text %q without a JSON Content-Type is a problem", body)
		}
	})
}

// FuzzReadBody: whatever the body and its Content-Encoding, reading it
// never panics, keeps a message within the limit, and a problem comes
// with a short detail.
func FuzzReadBody(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"value": 3}`))
	zw.Close()
	for _, c := range []struct {
		body     []byte
		encoding string
	}{{gz.Bytes(), "gzip"}, {gz.Bytes()[:15], "gzip"}, {[]byte("plain"), "gzip"}, {[]byte("x\x9c\x03\x00\x00\x00\x00\x01"), "deflate"},
		{[]byte("text"), "br"}, {[]byte("text"), "identity"}, {[]byte("text"), "\x00\xff"}} {
		f.Add(c.body, false, c.encoding)
	}
	f.Fuzz(func(t *testing.T, body []byte, declared bool, encoding string) {
		got := readBody(bytes.NewReader(body), declared, encoding)
		if got.problem != "" && (got.detail == "" || len(got.detail) > beet.MaxProblemDetailLen) {
			t.Fatalf("problem %q with detail %q", got.problem, got.detail)
		}
		if !utf8.ValidString(got.message) || strings.Contains(got.message, "\x00") || len(got.message) > beet.MaxMessageLen {
			t.Fatalf("message %q from %q", got.message, body)
		}
	})
}
