package beet

import (
	"strings"
	"unicode/utf8"
)

// TextRule says what a free-text field a person sets may hold.
type TextRule uint8

const (
	// TextRequired: the field may not be empty or blank.
	TextRequired TextRule = 1 << iota
	// TextLines: the field may hold tabs and line breaks (a description,
	// a notice's body); other fields are one line.
	TextLines
)

// ValidateText checks a person's free text: valid UTF-8, at most maxLen
// characters, and no control characters but the tabs and line breaks of
// multi-line text. NUL is refused everywhere: PostgreSQL's text cannot hold
// it, and SQLite would store what PostgreSQL refuses. A line break in a
// name would break the subject lines and chat messages it goes into. The
// bidirectional embeddings, overrides and isolates (U+202A-U+202E,
// U+2066-U+2069) are refused too: they reorder what follows them, so a
// name could show as another ("Trojan Source"), in alerts as on pages.
// Right-to-left text needs none of them; the marks (U+200E, U+200F) are
// allowed.
func ValidateText(field, s string, maxLen int, rule TextRule) error {
	if !utf8.ValidString(s) {
		return FieldError(field, "must be valid UTF-8")
	}
	if rule&TextRequired != 0 && strings.TrimSpace(s) == "" {
		return FieldError(field, "is required")
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		return FieldError(field, "is %d characters long; at most %d are allowed", n, maxLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			if rule&TextLines != 0 && (r == '\n' || r == '\r' || r == '\t') {
				continue
			}
			if rule&TextLines == 0 && (r == '\n' || r == '\r') {
				return FieldError(field, "must be one line")
			}
			return FieldError(field, "must not hold control characters (found U+%04X)", r)
		}
		if 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069 {
			return FieldError(field, "must not hold bidirectional control characters (found U+%04X)", r)
		}
	}
	return nil
}
