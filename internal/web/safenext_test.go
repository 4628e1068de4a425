package web

import "testing"

// A post-sign-in redirect stays on this site: browsers drop tabs and line
// breaks from a URL, so "/\t/evil.example" is "//evil.example" to them.
func TestSafeNextStaysOnThisSite(t *testing.T) {
	for next, want := range map[string]string{
		"/beets/3":             "/beets/3",
		"/beets?status=down":   "/beets?status=down",
		"//evil.example":       "/",
		"/\\evil.example":      "/",
		"/\t/evil.example/x":   "/",
		"/\n/evil.example":     "/",
		"/\r\n/evil.example":   "/",
		"https://evil.example": "/",
		"":                     "/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
