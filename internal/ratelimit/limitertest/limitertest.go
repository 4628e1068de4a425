// Package limitertest is the conformance suite every beet.RateLimiter must
// pass with the ingestion defaults (beet.IngestLimit per beet.IngestWindow).
package limitertest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// t0 is an arbitrary instant; the suite drives time through Allow's now.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	limit  = beet.IngestLimit
	window = beet.IngestWindow
)

// Run runs the suite. newLimiter must return a limiter with empty state (a
// fresh instance, or a fresh key namespace) configured with the ingestion
// defaults; it is called once per subtest.
func Run(t *testing.T, newLimiter func(t *testing.T) beet.RateLimiter) {
	tests := []struct {
		name string
		fn   func(t *testing.T, l beet.RateLimiter)
	}{
		{"SequentialOneInstant", testSequential},
		{"ConcurrentFreshKey", testConcurrent},
		{"RetryAfterIsOldestLeavingWindow", testRetryAfter},
		{"SlidingNotFixedWindow", testSliding},
		{"RejectedDoNotFillWindow", testRejectedDoNotFill},
		{"KeysIndependent", testKeysIndependent},
		{"KeysExactStrings", testKeysExact},
		{"EarlierNowAfterLaterNow", testEarlierNow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newLimiter(t)) })
	}
}

func allow(t *testing.T, l beet.RateLimiter, key string, now time.Time) (bool, time.Duration) {
	t.Helper()
	ok, retry, err := l.Allow(context.Background(), key, now)
	if err != nil {
		t.Fatalf("Allow(%s, %v): %v", beet.Redact(key), now.Sub(t0), err)
	}
	return ok, retry
}

// fill sends n requests at now and returns how many were allowed.
func fill(t *testing.T, l beet.RateLimiter, key string, now time.Time, n int) int {
	t.Helper()
	got := 0
	for range n {
		if ok, _ := allow(t, l, key, now); ok {
			got++
		}
	}
	return got
}

func wantAllowed(t *testing.T, l beet.RateLimiter, key string, at time.Duration) {
	t.Helper()
	if ok, retry := allow(t, l, key, t0.Add(at)); !ok {
		t.Fatalf("at %v: rejected (retry after %v), want allowed", at, retry)
	}
}

func wantRejected(t *testing.T, l beet.RateLimiter, key string, at, wantRetry time.Duration) {
	t.Helper()
	ok, retry := allow(t, l, key, t0.Add(at))
	if ok {
		t.Fatalf("at %v: allowed, want rejected", at)
	}
	if retry != wantRetry {
		t.Fatalf("at %v: retry after %v, want %v", at, retry, wantRetry)
	}
}

func testSequential(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	for i := range 100 {
		ok, retry := allow(t, l, key, t0)
		if want := i < limit; ok != want {
			t.Fatalf("request %d: allowed = %v, want %v", i+1, ok, want)
		}
		if !ok && retry != window {
			t.Fatalf("request %d: retry after %v, want %v", i+1, retry, window)
		}
	}
}

func testConcurrent(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			ok, _, err := l.Allow(context.Background(), key, t0)
			if err != nil {
				t.Errorf("Allow: %v", err)
			}
			if ok {
				allowed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("%d of 100 concurrent requests allowed, want %d", got, limit)
	}
}

func testRetryAfter(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	// One request every 100 ms: the last of 60 at 5.9 s.
	for i := range limit {
		wantAllowed(t, l, key, time.Duration(i)*100*time.Millisecond)
	}
	wantRejected(t, l, key, 6*time.Second, 4*time.Second)
	wantRejected(t, l, key, 9999*time.Millisecond, time.Millisecond)
	wantRejected(t, l, key, window-time.Microsecond, time.Microsecond)
	// The first entry leaves exactly at 10 s: one slot, then the next at 10.1 s.
	wantAllowed(t, l, key, window)
	wantRejected(t, l, key, window, 100*time.Millisecond)
	wantRejected(t, l, key, 10050*time.Millisecond, 50*time.Millisecond)
	wantAllowed(t, l, key, 10100*time.Millisecond)
}

func testSliding(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	if got := fill(t, l, key, t0.Add(9500*time.Millisecond), limit); got != limit {
		t.Fatalf("%d of %d allowed at 9.5 s", got, limit)
	}
	// A fixed [10 s, 20 s) bucket would allow this one.
	wantRejected(t, l, key, 10500*time.Millisecond, 9*time.Second)
	wantRejected(t, l, key, 19499*time.Millisecond, time.Millisecond)
	wantAllowed(t, l, key, 19600*time.Millisecond)
}

func testRejectedDoNotFill(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	if got := fill(t, l, key, t0, limit); got != limit {
		t.Fatalf("%d of %d allowed at 0", got, limit)
	}
	// 1000 rejected requests spread over the window.
	for i := range 1000 {
		at := time.Duration(i) * 9999 * time.Microsecond // up to 9.989 s
		wantRejected(t, l, key, at, window-at)
	}
	// The window frees when the accepted ones leave it: all 60 slots at 10 s.
	if got := fill(t, l, key, t0.Add(window), 100); got != limit {
		t.Fatalf("%d of 100 allowed at 10 s, want %d", got, limit)
	}
}

func testKeysIndependent(t *testing.T, l beet.RateLimiter) {
	a, b := beet.NewToken(), beet.NewToken()
	if got := fill(t, l, a, t0, 100); got != limit {
		t.Fatalf("key a: %d of 100 allowed, want %d", got, limit)
	}
	if got := fill(t, l, b, t0, 100); got != limit {
		t.Fatalf("key b: %d of 100 allowed after a was limited, want %d", got, limit)
	}
}

func testKeysExact(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	variants := []string{
		key,
		strings.ToUpper(key),
		strings.ToLower(key),
		key + " ",
		key[:len(key)-1],
		key + "/",
	}
	seen := map[string]bool{}
	for _, k := range variants {
		if seen[k] {
			continue // a token without letters of one case
		}
		seen[k] = true
		if got := fill(t, l, k, t0, limit+1); got != limit {
			t.Fatalf("variant %d: %d of %d allowed, want %d (keys must be exact, case-sensitive strings)",
				len(seen), got, limit+1, limit)
		}
	}
}

// A request whose now is earlier than the newest accepted one (clocks of
// two goroutines or instances) never lets more than the limit in.
func testEarlierNow(t *testing.T, l beet.RateLimiter) {
	key := beet.NewToken()
	if got := fill(t, l, key, t0.Add(5*time.Second), limit); got != limit {
		t.Fatalf("%d of %d allowed at 5 s", got, limit)
	}
	// The oldest entry, at 5 s, leaves the window at 15 s: 11 s from 4 s.
	wantRejected(t, l, key, 4*time.Second, 11*time.Second)
	wantAllowed(t, l, key, 15*time.Second)
}
