// Package ratelimit holds the implementations of beet.RateLimiter: an exact
// in-process sliding log (Memory), a Redis sliding log shared by all
// instances (Redis), and a wrapper that falls back from the one to the other
// when Redis is unreachable (Fallback).
//
// All of them keep the same sliding-log semantics at microsecond resolution
// (the resolution of an event's received_at): a request at time t for key k
// is allowed when fewer than Limit accepted requests for k have a timestamp
// in (t-Window, t]. Rejected requests are not recorded. When a request is
// rejected, retryAfter is the time until the oldest counted request leaves
// the window, that is when the next request would be allowed.
package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
)

// DefaultMaxKeys is the default hard cap on the keys a Memory limiter keeps.
// At about 400 bytes per key (BenchmarkMemoryBytesPerKey) that is about
// 80 MB when full; a flood of 1,000,000 random tokens peaked at about
// 126 MB of heap including garbage (BenchmarkMemoryFlood).
const DefaultMaxKeys = 200_000

// DefaultShards is the default number of independently locked shards.
const DefaultShards = 64

// maxWindow keeps ring offsets (uint32 microseconds, about 71 minutes) far
// from overflowing: see slot.rebase.
const maxWindow = time.Hour

// MemoryOptions configures NewMemory. Zero fields take their defaults.
type MemoryOptions struct {
	Limit   int           // accepted requests per key and window; default beet.IngestLimit
	Window  time.Duration // default beet.IngestWindow; at most one hour
	MaxKeys int           // hard cap on stored keys; default DefaultMaxKeys
	Shards  int           // number of locks; default DefaultShards, rounded up to a power of two
}

func (o MemoryOptions) withDefaults() MemoryOptions {
	if o.Limit <= 0 {
		o.Limit = beet.IngestLimit
	}
	if o.Window <= 0 {
		o.Window = beet.IngestWindow
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Shards <= 0 {
		o.Shards = DefaultShards
	}
	return o
}

// Memory is an exact, bounded, in-process sliding-log limiter.
//
// Each key keeps a fixed ring of its last Limit accepted timestamps (uint32
// microsecond offsets from a per-key base: 4 bytes per entry instead of 8).
// A request is allowed when the ring is not full or its oldest entry has
// left the window, which is exactly "fewer than Limit accepted in the
// window".
//
// Memory is bounded by MaxKeys. Keys live in shards, each with its own mutex,
// map and LRU list. Every call evicts up to two idle keys (whose newest
// accepted entry is older than the window, so they hold no information) from
// the LRU end of its shard: eviction is incremental, there is no sweeper and
// no pause. When a shard is full, a new key first evicts idle keys, then the
// least recently used key even if it is still active. That key loses its
// history and so fails open: it could get up to Limit more requests in its
// window. This only happens when more than MaxKeys keys are active within one
// window (a flood), is counted by ActiveEvictions, and is the price of a hard
// memory bound; the alternative, refusing new keys, would let a flood of
// random tokens lock out every real one.
//
// Timestamps are taken per key as non-decreasing: a call whose now is
// earlier than the key's newest entry (two goroutines that read the clock
// and then raced for the lock) is counted at that newest time. That never
// lets more than Limit entries into any window.
type Memory struct {
	limit  int32
	window int64 // microseconds
	seed   maphash.Seed
	mask   uint64
	shards []shard

	activeEvictions atomic.Uint64
}

var _ beet.RateLimiter = (*Memory)(nil)

type shard struct {
	mu    sync.Mutex
	idx   map[shortKey]int32 // key -> index in slots, for keys of up to maxShortKey bytes
	long  map[string]int32   // the same for longer keys
	slots []slot
	free  int32 // head of the free list (linked through slot.next), or -1
	head  int32 // most recently used, or -1
	tail  int32 // least recently used, or -1
	max   int   // keys this shard may hold

	_ [64]byte // keeps neighbouring shards' mutexes off one cache line
}

// shortKey holds a key of up to maxShortKey bytes by value. Ingestion
// tokens (beet.TokenLen, 31 bytes) fit: a new token's key is a copy into
// the slot and the map, no allocation (a string clone a new key before),
// and the map holds no pointers for the GC to scan. Production heartbeats
// come minutes apart, so nearly every request finds its key evicted as
// idle and inserts it again.
type shortKey struct {
	n uint8
	b [maxShortKey]byte
}

const maxShortKey = 31

func toShortKey(key string) (k shortKey) {
	k.n = uint8(copy(k.b[:], key))
	return k
}

// slot is one key's log: 96 bytes plus its ring.
type slot struct {
	key        shortKey // the key, if it is short
	long       string   // the key, if it is longer than maxShortKey
	base       int64    // microseconds since the Unix epoch; ring entries are offsets from it
	ring       []uint32 // len limit; allocated once per slot and reused after eviction
	start      int32    // index of the oldest entry
	n          int32    // entries in the ring
	prev, next int32    // LRU neighbours (next also links the free list)
}

// NewMemory returns an in-process limiter. It panics on a Window over one
// hour, which no caller needs and which the compact ring cannot hold.
func NewMemory(opts MemoryOptions) *Memory {
	opts = opts.withDefaults()
	if opts.Window > maxWindow {
		panic(fmt.Sprintf("ratelimit: window %v is over %v", opts.Window, maxWindow))
	}
	if opts.Limit > math.MaxInt32 {
		panic("ratelimit: limit too large")
	}
	n := 1
	for n < opts.Shards {
		n <<= 1
	}
	// The per-shard cap is rounded down so that the total never exceeds
	// MaxKeys; fewer shards when MaxKeys is tiny (tests).
	for n > 1 && opts.MaxKeys/n < 1 {
		n >>= 1
	}
	m := &Memory{
		limit:  int32(opts.Limit),
		window: opts.Window.Microseconds(),
		seed:   maphash.MakeSeed(), // per process, so an attacker cannot aim a flood at one shard
		mask:   uint64(n - 1),
		shards: make([]shard, n),
	}
	for i := range m.shards {
		s := &m.shards[i]
		s.idx = make(map[shortKey]int32)
		s.long = make(map[string]int32)
		s.free, s.head, s.tail = -1, -1, -1
		s.max = opts.MaxKeys / n
	}
	return m
}

// Allow implements beet.RateLimiter. It never returns an error.
func (m *Memory) Allow(_ context.Context, key string, now time.Time) (bool, time.Duration, error) {
	t := now.UnixMicro()
	s := &m.shards[maphash.String(m.seed, key)&m.mask]
	s.mu.Lock()
	var (
		i  int32
		ok bool
	)
	if len(key) <= maxShortKey {
		i, ok = s.idx[toShortKey(key)]
	} else {
		i, ok = s.long[key]
	}
	if !ok {
		i = m.insert(s, key, t)
	}
	allowed, retry := s.slots[i].allow(t, m.limit, m.window)
	s.touch(i)
	m.evictIdle(s, t, 2) // keeps up: a call adds at most one key
	s.mu.Unlock()
	return allowed, time.Duration(retry) * time.Microsecond, nil
}

// allow applies the sliding log at t (microseconds). It returns whether the
// request was accepted and, if not, the microseconds until it would be.
func (sl *slot) allow(t int64, limit int32, window int64) (bool, int64) {
	tc := t
	if sl.n > 0 {
		newest := sl.base + int64(sl.ring[(sl.start+sl.n-1)%limit])
		if tc < newest {
			tc = newest // per-key non-decreasing time; see Memory
		}
		if tc-newest >= window {
			sl.n = 0 // every entry has left the window
		}
	}
	if sl.n == 0 {
		sl.base, sl.start = tc, 0
	}
	if sl.n < limit {
		sl.put((sl.start+sl.n)%limit, tc, window)
		sl.n++
		return true, 0
	}
	// Full: the oldest of the last limit accepted entries decides.
	oldest := sl.base + int64(sl.ring[sl.start])
	if tc-oldest < window {
		return false, oldest + window - t
	}
	sl.put(sl.start, tc, window)
	sl.start = (sl.start + 1) % limit
	return true, 0
}

func (sl *slot) put(j int32, t, window int64) {
	if t-sl.base > math.MaxUint32 {
		sl.rebase(t - window)
	}
	sl.ring[j] = uint32(t - sl.base)
}

// rebase moves the base to b, at most one window before now, for a key that
// has been busy for over an hour. Entries before b are out of the window for
// every later call (times are non-decreasing per key), so they may be
// clamped to b without changing any decision.
func (sl *slot) rebase(b int64) {
	limit := int32(len(sl.ring))
	for k := int32(0); k < sl.n; k++ {
		j := (sl.start + k) % limit
		abs := sl.base + int64(sl.ring[j])
		if abs < b {
			abs = b
		}
		sl.ring[j] = uint32(abs - b)
	}
	sl.base = b
}

func (sl *slot) idle(t, window int64, limit int32) bool {
	if sl.n == 0 {
		return true
	}
	newest := sl.base + int64(sl.ring[(sl.start+sl.n-1)%limit])
	return t-newest >= window
}

// insert stores a new key and returns its slot, evicting when the shard is full.
func (m *Memory) insert(s *shard, key string, t int64) int32 {
	if s.len() >= s.max {
		m.evictIdle(s, t, 4)
		if s.len() >= s.max {
			m.activeEvictions.Add(1)
			s.evict(s.tail)
		}
	}
	var i int32
	if s.free >= 0 {
		i = s.free
		s.free = s.slots[i].next
	} else {
		s.slots = append(s.slots, slot{ring: make([]uint32, m.limit)})
		i = int32(len(s.slots) - 1)
	}
	sl := &s.slots[i]
	sl.n, sl.start = 0, 0
	sl.prev, sl.next = -1, -1
	if len(key) <= maxShortKey {
		sl.key = toShortKey(key)
		s.idx[sl.key] = i
	} else {
		// Cloned: the caller's key is often a slice of a request URL,
		// which would otherwise be kept alive as long as the key.
		sl.long = strings.Clone(key)
		s.long[sl.long] = i
	}
	s.pushFront(i)
	return i
}

// len is how many keys s holds.
func (s *shard) len() int { return len(s.idx) + len(s.long) }

// evictIdle evicts up to max idle keys from the LRU end of s.
func (m *Memory) evictIdle(s *shard, t int64, max int) {
	for ; max > 0 && s.tail >= 0; max-- {
		if !s.slots[s.tail].idle(t, m.window, m.limit) {
			return
		}
		s.evict(s.tail)
	}
}

func (s *shard) evict(i int32) {
	sl := &s.slots[i]
	if sl.long != "" {
		delete(s.long, sl.long)
		sl.long = ""
	} else {
		delete(s.idx, sl.key)
	}
	s.unlink(i)
	sl.n = 0
	sl.next = s.free
	s.free = i
}

func (s *shard) unlink(i int32) {
	sl := &s.slots[i]
	if sl.prev >= 0 {
		s.slots[sl.prev].next = sl.next
	} else {
		s.head = sl.next
	}
	if sl.next >= 0 {
		s.slots[sl.next].prev = sl.prev
	} else {
		s.tail = sl.prev
	}
	sl.prev, sl.next = -1, -1
}

func (s *shard) pushFront(i int32) {
	sl := &s.slots[i]
	sl.prev, sl.next = -1, s.head
	if s.head >= 0 {
		s.slots[s.head].prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}

func (s *shard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

// Len reports how many keys are stored now.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.len()
		s.mu.Unlock()
	}
	return n
}

// ActiveEvictions reports how many keys with requests still in their window
// were evicted because their shard was full. Each such eviction may have let
// that key exceed the limit (see Memory). Non-zero means more than MaxKeys
// keys were active at once: a flood, or MaxKeys too small.
func (m *Memory) ActiveEvictions() uint64 { return m.activeEvictions.Load() }
