package beet

import (
	"strings"
	"testing"
)

func TestValidateText(t *testing.T) {
	cases := []struct {
		s    string
		rule TextRule
		want string // "" for valid, else a part of the message
	}{
		{"Checkout", TextRequired, ""},
		{"Café ✓", TextRequired, ""},
		{"", 0, ""},
		{"", TextRequired, "is required"},
		{" \t", TextRequired | TextLines, "is required"},
		{"a\x00b", 0, "U+0000"},
		{"a\x00b", TextLines, "U+0000"},
		{"a\nb", 0, "one line"},
		{"a\r\nb", 0, "one line"},
		{"a\nb\r\n\tc", TextLines, ""},
		{"a\tb", 0, "U+0009"},
		{"esc\x1b[31m", TextLines, "U+001B"},
		{"del\x7f", 0, "U+007F"},
		{"c1\u0085", TextLines, "U+0085"},
		{"bad\xff", 0, "valid UTF-8"},
		{"a\u202eb", TextRequired, "must not hold bidirectional control characters (found U+202E)"},
		{"a\u202ab", TextLines, "U+202A"},
		{"x\u2066y\u2069", 0, "U+2066"},
		{"\u2069", 0, "U+2069"},
		{"שלום \u200fעולם", TextRequired, ""}, // right-to-left text, with a mark
		{"a\u2065b\u202fc", 0, ""},            // next to the ranges
		{strings.Repeat("é", 10), 0, ""},
		{strings.Repeat("é", 11), 0, "11 characters long; at most 10"},
	}
	for _, c := range cases {
		err := ValidateText("name", c.s, 10, c.rule)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("ValidateText(%q, %b) = %v, want nil", c.s, c.rule, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ValidateText(%q, %b) = %v, want an error saying %q", c.s, c.rule, err, c.want)
		}
	}
}
