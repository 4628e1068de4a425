package ingest

import (
	"runtime"
	"testing"
	"time"
)

// TestTTLLRU: entries expire after the TTL (on the cache's clock), the
// size bounds memory, and building caches starts no goroutine (the
// expirable LRU it replaced left one running per cache).
func TestTTLLRU(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newTTLLRU[string, int](2, time.Minute)
	c.now = func() time.Time { return now }
	c.Add("a", 1)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	now = now.Add(time.Minute - time.Nanosecond)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("expired before the TTL")
	}
	now = now.Add(time.Nanosecond)
	if _, ok := c.Get("a"); ok || c.Len() != 0 {
		t.Fatalf("still there at the TTL (len %d)", c.Len())
	}
	c.Add("a", 1)
	c.Add("b", 2)
	c.Get("a")
	c.Add("c", 3) // evicts b, the least recently used
	if _, ok := c.Get("b"); ok || c.Len() != 2 {
		t.Fatalf("size not bounded: len %d", c.Len())
	}

	before := runtime.NumGoroutine()
	for range 100 {
		newTokenCache(10, time.Second)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("100 token caches started %d goroutines", after-before)
	}
}
