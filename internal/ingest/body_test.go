package ingest

import (
	"bytes"
	"image/gif"
	"math"
	"strings"
	"testing"

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
	for _, c := range []struct {
		body    string
		value   *float64
		problem beet.ProblemKind
	}{
		{"", nil, ""},
		{"  \n", nil, ""},
		{"{}", nil, ""},
		{`{"value": 12.5}`, v(12.5), ""},
		{`{"value": -3e2, "note": "x"}`, v(-300), ""},
		{`{"value": 0}`, v(0), ""},
		{`{"other": 1}`, nil, ""},
		{`{"value": "12"}`, nil, beet.ProblemBadValue},
		{`{"value": true}`, nil, beet.ProblemBadValue},
		{`{"value": null}`, nil, beet.ProblemBadValue},
		{`{"value": [1]}`, nil, beet.ProblemBadValue},
		{`{"value": {"a":1}}`, nil, beet.ProblemBadValue},
		{`{"value": 1e400}`, nil, beet.ProblemBadValue},
		{`{"value": -1e400}`, nil, beet.ProblemBadValue},
		{`[1,2]`, nil, beet.ProblemBadBody},
		{`"value"`, nil, beet.ProblemBadBody},
		{`{"value": 1`, nil, beet.ProblemBadBody},
		{`value=1`, nil, beet.ProblemBadBody},
		{`{"value": 1}{}`, nil, beet.ProblemBadBody},
		{`{"value": 1, "pad": "` + strings.Repeat("x", MaxBody) + `"}`, nil, beet.ProblemBodyTooBig},
	} {
		got := parseBody([]byte(c.body))
		if got.problem != c.problem || (got.value == nil) != (c.value == nil) || (got.value != nil && *got.value != *c.value) {
			t.Errorf("parseBody(%.60q) = value %v problem %q, want %v %q", c.body, got.value, got.problem, c.value, c.problem)
		}
		if got.problem != "" && (got.detail == "" || len(got.detail) > beet.MaxProblemDetailLen) {
			t.Errorf("parseBody(%.60q): detail %q", c.body, got.detail)
		}
	}
}

// FuzzParseBody checks that no body panics, a value is always finite, and
// every problem comes with a short detail.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{"", "{}", `{"value": 12.5}`, `{"value": "x"}`, `{"value": 1e400}`, "[", `{"value":-0}`, "\xff\xfe", `{"value": 1.7976931348623157e308}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := parseBody(body)
		if got.value != nil && (math.IsInf(*got.value, 0) || math.IsNaN(*got.value)) {
			t.Fatalf("non-finite value %v from %q", *got.value, body)
		}
		if got.value != nil && got.problem != "" {
			t.Fatalf("both a value and a problem from %q", body)
		}
		if got.problem != "" && (got.detail == "" || len(got.detail) > beet.MaxProblemDetailLen) {
			t.Fatalf("problem %q with detail %q", got.problem, got.detail)
		}
	})
}

func TestIsPreviewBot(t *testing.T) {
	for _, ua := range []string{
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"Twitterbot/1.0", "facebookexternalhit/1.1", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"TelegramBot (like TwitterBot)", "WhatsApp/2.23.20.0", "LinkedInBot/1.0",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Mozilla/5.0 (compatible; bingbot/2.0)",
	} {
		if !isPreviewBot(ua) {
			t.Errorf("isPreviewBot(%q) = false", ua)
		}
	}
	for _, ua := range []string{"", "curl/8.5.0", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36", "Go-http-client/1.1"} {
		if isPreviewBot(ua) {
			t.Errorf("isPreviewBot(%q) = true", ua)
		}
	}
}
