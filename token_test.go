package beet_test

import (
	"strings"
	"testing"

	"github.com/beethq/beet"
)

func TestNewTokenShape(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := beet.NewToken()
		if !strings.HasPrefix(tok, beet.TokenPrefix) || len(tok) != beet.TokenLen {
			t.Fatalf("token %q: want prefix %q and length %d", tok, beet.TokenPrefix, beet.TokenLen)
		}
		if !beet.ValidTokenShape(tok) {
			t.Fatalf("fresh token %q fails its own shape check", tok)
		}
		if beet.ValidAPIKeyShape(tok) {
			t.Fatalf("token %q passes as an API key", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
	}
}

func TestValidTokenShapeRejects(t *testing.T) {
	tok := beet.NewToken()
	flipped := []byte(tok)
	// Change one character of the random part: the checksum must catch it.
	if flipped[5] == 'a' {
		flipped[5] = 'b'
	} else {
		flipped[5] = 'a'
	}
	for _, s := range []string{
		"", "bt_", tok[:len(tok)-1], tok + "x", "xx" + tok[2:], string(flipped),
		tok[:10] + "-" + tok[11:], tok[:10] + "é" + tok[12:],
		strings.Repeat("a", beet.TokenLen),
	} {
		if beet.ValidTokenShape(s) {
			t.Errorf("ValidTokenShape(%q) = true, want false", s)
		}
	}
}

func TestValidTokenShapeAllocatesNothing(t *testing.T) {
	tok := beet.NewToken()
	if n := testing.AllocsPerRun(100, func() { beet.ValidTokenShape(tok) }); n != 0 {
		t.Fatalf("ValidTokenShape allocates %v times per call, want 0", n)
	}
}

func TestRedactNeverShowsWholeSecret(t *testing.T) {
	tok := beet.NewToken()
	if r := beet.Redact(tok); strings.Contains(r, tok[beet.RedactedLen:]) || !strings.HasPrefix(r, "bt_") {
		t.Fatalf("Redact(%q) = %q", tok, r)
	}
	for _, s := range []string{"", "a", "abcdef", "bt_short"} {
		if r := beet.Redact(s); s != "" && strings.TrimSuffix(r, "…") == s {
			t.Errorf("Redact(%q) = %q shows it whole", s, r)
		}
	}
}

// TestUUIDTokenShape: an imported Healthchecks check's UUID passes the
// token-shape check in its canonical lowercase form only.
func TestUUIDTokenShape(t *testing.T) {
	for s, want := range map[string]bool{
		"31365bce-8da9-4729-8ff3-aaa71d56b712":  true,
		"00000000-0000-0000-0000-000000000000":  true,
		"31365BCE-8DA9-4729-8FF3-AAA71D56B712":  false, // Healthchecks' URLs take lowercase only
		"31365bce8da947298ff3aaa71d56b712":      false,
		"31365bce-8da9-4729-8ff3-aaa71d56b71":   false,
		"31365bce-8da9-4729-8ff3-aaa71d56b712a": false,
		"31365bce-8da94-729-8ff3-aaa71d56b712":  false,
		"31365bce-8da9-4729-8ff3-aaa71d56b71g":  false,
	} {
		if got := beet.ValidTokenShape(s); got != want {
			t.Errorf("ValidTokenShape(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestRedactPath(t *testing.T) {
	tok := beet.NewToken()
	for _, tc := range []struct{ in, want string }{
		{"/healthz", "/healthz"},
		{"/api/v1/beets/12", "/api/v1/beets/12"},
		{"/api/v1/beet/" + tok, "/api/v1/beet/" + beet.Redact(tok)},
		{"/api/v1/beet/abcdefgh", "/api/v1/beet/abcd…"},
		{"/api/v1/beet/", "/api/v1/beet/"},
		{"/x/y" + tok + "/z", "/x/y" + beet.Redact(tok) + "/z"},
		// Healthchecks' path, with an imported check's UUID as the token,
		// also under a base path (the log sees the whole path).
		{"/ping/31365bce-8da9-4729-8ff3-aaa71d56b712", "/ping/31365bc…"},
		{"/ping/31365bce-8da9-4729-8ff3-aaa71d56b712/start", "/ping/31365bc…/start"},
		{"/beet/ping/31365bce-8da9-4729-8ff3-aaa71d56b712/0", "/beet/ping/31365bc…/0"},
		{"/beet/api/v1/beet/31365bce-8da9-4729-8ff3-aaa71d56b712", "/beet/api/v1/beet/31365bc…"},
		// A UUID anywhere else: hc-ping.com's URL with only the host
		// changed, or a token pasted into an API path.
		{"/31365bce-8da9-4729-8ff3-aaa71d56b712", "/31365bc…"},
		{"/31365BCE-8DA9-4729-8FF3-AAA71D56B712/start", "/31365BC…/start"},
		{"/api/v1/beets/x31365bce-8da9-4729-8ff3-aaa71d56b712", "/api/v1/beets/x31365bc…"},
		{"/2026-12-04-report", "/2026-12-04-report"},
	} {
		if got := beet.RedactPath(tc.in); got != tc.want {
			t.Errorf("RedactPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzValidTokenShape checks the shape check against arbitrary input: it
// never panics, accepts only strings of the exact shape, and agrees with
// the API key check on nothing.
func FuzzValidTokenShape(f *testing.F) {
	for _, s := range []string{"", "bt_", beet.NewToken(), beet.NewAPIKey(), "bt_" + strings.Repeat("A", 28), "bt_\x00\xff", "bt_é",
		"31365bce-8da9-4729-8ff3-aaa71d56b712", "31365BCE-8DA9-4729-8FF3-AAA71D56B712", "31365bce8da947298ff3aaa71d56b712xxxx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := beet.ValidTokenShape(s)
		if ok && (len(s) != beet.TokenLen || !strings.HasPrefix(s, beet.TokenPrefix)) && !beet.IsUUIDToken(s) {
			t.Fatalf("accepted %q", s)
		}
		if beet.IsUUIDToken(s) && (len(s) != 36 || strings.ToLower(s) != s || strings.Count(s, "-") != 4 || !ok) {
			t.Fatalf("IsUUIDToken(%q) but not of the shape, or not a valid token", s)
		}
		if ok && beet.ValidAPIKeyShape(s) {
			t.Fatalf("%q passes as both a token and an API key", s)
		}
		if r := beet.Redact(s); len(s) > 0 && strings.TrimSuffix(r, "…") == s {
			t.Fatalf("Redact(%q) shows it whole", s)
		}
	})
}
