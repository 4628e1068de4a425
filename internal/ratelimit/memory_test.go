package ratelimit_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/ratelimit/limitertest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestMemoryConformance(t *testing.T) {
	limitertest.Run(t, func(t *testing.T) beet.RateLimiter {
		return ratelimit.NewMemory(ratelimit.MemoryOptions{})
	})
}

func mustAllow(t testing.TB, l beet.RateLimiter, key string, now time.Time) bool {
	t.Helper()
	ok, _, err := l.Allow(context.Background(), key, now)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestMemoryIdleKeysEvicted(t *testing.T) {
	// Each call evicts at most two idle keys of its own shard, and random
	// keys spread unevenly: with 64 shards about 1 run in 10,000 left a
	// shard with old keys it had too few calls to evict. Four shards hold
	// about 250 old keys and get about 500 calls each, so every one has
	// room to evict all of its old keys.
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{Shards: 4})
	old := make([]string, 1000)
	for i := range old {
		old[i] = beet.NewToken()
		mustAllow(t, m, old[i], t0)
	}
	// Still active 9.9 s later: nothing may go.
	for range 2000 {
		mustAllow(t, m, beet.NewToken(), t0.Add(9900*time.Millisecond))
	}
	if got := m.Len(); got != 3000 {
		t.Fatalf("Len = %d after 3000 keys within one window, want 3000", got)
	}
	// At 15 s the first 1000 are idle; other keys' traffic evicts them
	// incrementally, and keeps the 2000 still active.
	for range 2000 {
		mustAllow(t, m, beet.NewToken(), t0.Add(15*time.Second))
	}
	if got := m.Len(); got != 4000 {
		t.Fatalf("Len = %d, want 4000: idle keys were not evicted, or active ones were", got)
	}
	if got := m.ActiveEvictions(); got != 0 {
		t.Fatalf("ActiveEvictions = %d, want 0", got)
	}
}

func TestMemoryCapEvictsIdleFirstThenLRU(t *testing.T) {
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{MaxKeys: 2, Shards: 1})
	a, b, c, d := "a", "b", "c", "d"
	if n := fillN(t, m, a, t0, 60); n != 60 {
		t.Fatal(n)
	}
	mustAllow(t, m, b, t0.Add(5*time.Second))
	// At 10.5 s a is idle (its newest entry is at 0): c replaces it.
	mustAllow(t, m, c, t0.Add(10500*time.Millisecond))
	if got, ev := m.Len(), m.ActiveEvictions(); got != 2 || ev != 0 {
		t.Fatalf("Len = %d, ActiveEvictions = %d; want 2, 0", got, ev)
	}
	// b and c are active; b was used after c, so c is the LRU and d evicts it.
	mustAllow(t, m, b, t0.Add(11*time.Second))
	mustAllow(t, m, d, t0.Add(11*time.Second))
	if got, ev := m.Len(), m.ActiveEvictions(); got != 2 || ev != 1 {
		t.Fatalf("Len = %d, ActiveEvictions = %d; want 2, 1", got, ev)
	}
	// b kept its two entries: 58 more in its window, not 60.
	if n := fillN(t, m, b, t0.Add(12*time.Second), 100); n != 58 {
		t.Fatalf("b: %d allowed, want 58 (its history must survive)", n)
	}
}

func fillN(t testing.TB, l beet.RateLimiter, key string, now time.Time, n int) int {
	got := 0
	for range n {
		if mustAllow(t, l, key, now) {
			got++
		}
	}
	return got
}

// A key busy for longer than the ring's uint32 offsets reach (71 min)
// stays exact across the rebase.
func TestMemoryLongBusyKey(t *testing.T) {
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	key := beet.NewToken()
	var at time.Duration
	for ; at < 2*time.Hour; at += 200 * time.Millisecond { // 50 per window
		if !mustAllow(t, m, key, t0.Add(at)) {
			t.Fatalf("rejected at %v", at)
		}
	}
	last := at - 200*time.Millisecond
	// 50 in the last window: exactly 10 more now.
	if n := fillN(t, m, key, t0.Add(last), 20); n != 10 {
		t.Fatalf("%d allowed in a burst after 50 in the window, want 10", n)
	}
	// The oldest counted entry is 49 × 200 ms before last.
	_, retry, _ := m.Allow(context.Background(), key, t0.Add(last))
	if want := 10*time.Second - 49*200*time.Millisecond; retry != want {
		t.Fatalf("retry after %v, want %v", retry, want)
	}
}

func TestMemoryNoAllocsOnHotKey(t *testing.T) {
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	key := beet.NewToken()
	ctx := context.Background()
	now := t0
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Millisecond)
		m.Allow(ctx, key, now)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Allow on a known key, want 0", allocs)
	}
}

// A heartbeat's requests come minutes apart, so its key has been evicted
// as idle by the next one: inserting a token as a new key allocates
// nothing once the limiter holds as many keys as at its busiest (it
// cloned the key, one allocation a request, before).
func TestMemoryNoAllocsOnNewKey(t *testing.T) {
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = beet.NewToken()
	}
	ctx := context.Background()
	now, i := t0, 0
	next := func() {
		now = now.Add(10 * time.Millisecond) // a key comes back after 20 s: idle, evicted
		m.Allow(ctx, keys[i], now)
		i = (i + 1) % len(keys)
	}
	for range 2 * len(keys) {
		next()
	}
	allocs := testing.AllocsPerRun(len(keys), next)
	if allocs != 0 {
		t.Fatalf("%v allocations per Allow of a new key, want 0", allocs)
	}
	if m.Len() > len(keys) {
		t.Fatalf("Len = %d, want ≤ %d: idle keys were not evicted", m.Len(), len(keys))
	}
}

// Keys longer than a token, and keys that differ only in length, are kept
// apart.
func TestMemoryKeysOfAnyLength(t *testing.T) {
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{Limit: 1, Shards: 1})
	long := beet.NewToken() + "-and-more"
	for _, k := range []string{"", "a", "a\x00", long[:31], long[:32], long} {
		if !mustAllow(t, m, k, t0) {
			t.Fatalf("key %q: first request refused", k)
		}
	}
	for _, k := range []string{"", "a", "a\x00", long[:31], long[:32], long} {
		if mustAllow(t, m, k, t0.Add(time.Second)) {
			t.Fatalf("key %q: second request allowed past a limit of 1", k)
		}
	}
	if got := m.Len(); got != 6 {
		t.Fatalf("Len = %d, want 6", got)
	}
	// Idle long keys are evicted like short ones.
	mustAllow(t, m, "b", t0.Add(time.Minute))
	mustAllow(t, m, "c", t0.Add(time.Minute))
	mustAllow(t, m, "d", t0.Add(time.Minute))
	if got := m.Len(); got != 3 {
		t.Fatalf("Len = %d after a minute, want 3: idle keys were kept", got)
	}
	if !mustAllow(t, m, long, t0.Add(time.Minute)) {
		t.Fatal("an evicted long key is still limited")
	}
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// keyOf makes distinct token-shaped keys without crypto/rand, so the flood
// measures the limiter, not the generator.
func keyOf(i int) string {
	return fmt.Sprintf("bt_%022d%06d", i, i%1000000)
}

// A flood of 1,000,000 distinct keys within one window (all active, the
// worst case) keeps at most MaxKeys keys and a heap bounded by MaxKeys.
func TestMemoryFloodBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000,000 keys; skipped with -short")
	}
	const maxKeys = 100_000
	const n = 1_000_000
	before := heapInuse()
	m := ratelimit.NewMemory(ratelimit.MemoryOptions{MaxKeys: maxKeys})
	var peak uint64
	var ms runtime.MemStats
	for i := range n {
		// 10 s spread over the flood: every key is active when it arrives.
		mustAllow(t, m, keyOf(i), t0.Add(time.Duration(i)*10*time.Microsecond))
		if i%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	if got := m.Len(); got > maxKeys {
		t.Fatalf("Len = %d after %d keys, want ≤ %d", got, n, maxKeys)
	}
	after := heapInuse()
	grown := int64(after) - int64(before)
	t.Logf("flood of %d keys, MaxKeys %d: Len %d, active evictions %d, heap in use grew %.1f MB (%.0f B per stored key), peak heap in use %.1f MB",
		n, maxKeys, m.Len(), m.ActiveEvictions(), float64(grown)/1e6, float64(grown)/float64(m.Len()), float64(peak)/1e6)
	if limit := int64(1500 * maxKeys); grown > limit {
		t.Fatalf("heap in use grew %d bytes, want < %d (1.5 KB × MaxKeys)", grown, limit)
	}
	if m.ActiveEvictions() < n-maxKeys {
		t.Fatalf("ActiveEvictions = %d, want ≥ %d", m.ActiveEvictions(), n-maxKeys)
	}
	runtime.KeepAlive(m)
}

func BenchmarkMemoryAllow(b *testing.B) {
	ctx := context.Background()
	b.Run("hot-key", func(b *testing.B) {
		m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		key := beet.NewToken()
		now := t0
		b.ReportAllocs()
		for b.Loop() {
			now = now.Add(time.Microsecond) // mostly rejected: the full-ring path
			m.Allow(ctx, key, now)
		}
	})
	// 10,000 keys in turn, a request every step.
	roundRobin := func(step time.Duration) func(b *testing.B) {
		return func(b *testing.B) {
			m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
			keys := make([]string, 10_000)
			for i := range keys {
				keys[i] = beet.NewToken()
			}
			now := t0
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(step)
				m.Allow(ctx, keys[i], now)
				if i++; i == len(keys) {
					i = 0
				}
			}
		}
	}
	b.Run("round-robin-10k", roundRobin(time.Microsecond))
	// Every request a new key, its slot and map entry those of a key
	// evicted as idle: a heartbeat's requests come minutes apart (here a
	// key comes back after 20 s).
	b.Run("new-key-10k", roundRobin(2*time.Millisecond))
	b.Run("parallel-10k", func(b *testing.B) {
		m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		keys := make([]string, 10_000)
		for i := range keys {
			keys[i] = beet.NewToken()
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.Allow(ctx, keys[i%len(keys)], time.Now())
				i += 7
			}
		})
	})
}

// BenchmarkMemoryBytesPerKey reports the heap per active key: 100,000 keys,
// each with a full ring (60 entries).
func BenchmarkMemoryBytesPerKey(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = keyOf(i)
	}
	for b.Loop() {
		before := heapInuse()
		m := ratelimit.NewMemory(ratelimit.MemoryOptions{MaxKeys: 2 * n})
		for j := range 60 {
			now := t0.Add(time.Duration(j) * time.Millisecond)
			for _, k := range keys {
				m.Allow(context.Background(), k, now)
			}
		}
		after := heapInuse()
		if m.Len() != n {
			b.Fatalf("Len = %d", m.Len())
		}
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/key")
		runtime.KeepAlive(m)
	}
}

// BenchmarkMemoryFlood reports the peak heap while 1,000,000 random tokens
// arrive within one window with the default MaxKeys.
func BenchmarkMemoryFlood(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = keyOf(i)
	}
	for b.Loop() {
		before := heapInuse()
		m := ratelimit.NewMemory(ratelimit.MemoryOptions{})
		var peak uint64
		var ms runtime.MemStats
		for i, k := range keys {
			m.Allow(context.Background(), k, t0.Add(time.Duration(i)*10*time.Microsecond))
			if i%50_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		b.ReportMetric(float64(int64(peak)-int64(before))/1e6, "peak-MB")
		b.ReportMetric(float64(m.Len()), "keys")
		runtime.KeepAlive(m)
	}
}
