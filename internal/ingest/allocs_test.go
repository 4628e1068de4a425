package ingest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/testalloc"
)

// TestHandlerAllocations fails if the handler allocates on the request's
// goroutine again: a recorded GET (a browser's User-Agent, which the bot
// check once lowered into a new string), a cached unknown token and a HEAD
// allocate nothing, a request past the limit nothing but what the problem
// note keeps. The writer's commit, on its own goroutine, is not counted.
func TestHandlerAllocations(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	w := &testalloc.ResponseWriter{H: http.Header{}}
	browser := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	unknown := beet.NewToken()
	r.send("GET", ingest.Prefix+unknown, "", "", "curl/8.0") // its commit caches it as no beet's
	for _, c := range []struct {
		name, method, path string
		step               time.Duration
		status             int
		max                float64
	}{
		{"recorded GET", http.MethodGet, ingest.Prefix + b.Token, time.Second, http.StatusOK, 0},
		{"unknown token", http.MethodGet, ingest.Prefix + unknown, time.Second, http.StatusOK, 0},
		{"HEAD", http.MethodHead, ingest.Prefix + b.Token, 0, http.StatusOK, 0},
		{"past the limit", http.MethodGet, ingest.Prefix + b.Token, 0, http.StatusTooManyRequests, 0},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		req.Header.Set("User-Agent", browser)
		if c.status == http.StatusTooManyRequests {
			for range 60 {
				r.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		}
		n := testalloc.Under(t, "(*Handler).ServeHTTP", 200, func() {
			r.clock.Advance(c.step) // a second a request stays under the limit
			clear(w.H)
			r.h.ServeHTTP(w, req)
			if w.Status != c.status {
				t.Fatalf("%s: status %d, want %d", c.name, w.Status, c.status)
			}
		})
		t.Logf("%s: %.2f allocations a request", c.name, n)
		if n > c.max+0.5 {
			t.Errorf("%s: %.2f allocations a request, want %.0f", c.name, n, c.max)
		}
	}
}
