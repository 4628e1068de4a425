package ingest

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// containsBot is the plain definition isPreviewBot must agree with.
func containsBot(ua string) bool {
	lower := strings.ToLower(ua)
	for _, b := range previewBots {
		if strings.Contains(lower, b) {
			return true
		}
	}
	return false
}

// TestIsPreviewBotAgrees checks the one-pass search against the plain
// definition: every name in any case, anywhere in a User-Agent, and random
// strings made of the names' own letters, which come close to names often.
func TestIsPreviewBotAgrees(t *testing.T) {
	browser := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	for _, b := range previewBots {
		for _, ua := range []string{b, strings.ToUpper(b), browser + " " + strings.ToUpper(b[:1]) + b[1:], b + "/1.0 " + browser,
			browser[:40] + strings.ToUpper(b) + browser[40:]} {
			if !isPreviewBot(ua) {
				t.Errorf("isPreviewBot(%q) = false", ua)
			}
		}
		if isPreviewBot(b[:len(b)-1]) != containsBot(b[:len(b)-1]) {
			t.Errorf("isPreviewBot(%q) disagrees", b[:len(b)-1])
		}
	}
	letters := "abcdefghiklmnoprstuvwxyzABGDFKLMNOPRSTW-. /"
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if ua := string(b); isPreviewBot(ua) != containsBot(ua) {
			t.Fatalf("isPreviewBot(%q) = %v, the plain search says %v", ua, isPreviewBot(ua), containsBot(ua))
		}
	}
}

// BenchmarkIsPreviewBot is the check every recorded GET makes, beside the
// plain search it replaced (lower the whole User-Agent, one search a name).
func BenchmarkIsPreviewBot(b *testing.B) {
	for _, ua := range []struct{ name, ua string }{
		{"browser", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"},
		{"curl", "curl/8.5.0"},
	} {
		for _, f := range []struct {
			name string
			fn   func(string) bool
		}{{"onepass", isPreviewBot}, {"plain", containsBot}} {
			b.Run(ua.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f.fn(ua.ua)
				}
			})
		}
	}
}
