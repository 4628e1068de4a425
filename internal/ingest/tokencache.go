package ingest

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/beethq/beet"
)

// tokenCache remembers what a token resolved to. The request path does not
// look tokens up (the commit matches each event to the beet that has its
// token then, in one statement for the whole group); the cache answers the
// two questions asked before that:
//
//   - Is this token known to be no beet's? Commits report the tokens that
//     matched nothing, so a rotated or deleted beet's token that keeps
//     being sent costs no commit. A cached miss cannot hide a bt_ token's
//     beet: a bt_ token is fresh randomness when a beet gets it, that
//     nobody could have sent before, and it never passes to another beet.
//     A UUID token is not: `beet import healthchecks` gives a beet the
//     UUID of a check whose clients may have pinged it a moment before
//     (or while a deleted imported beet was imported again), on any
//     instance. So a miss is not remembered for a UUID token: each request
//     with an unknown one costs its commit's lookup (at most 60 in 10 s a
//     token, as the rate limit allows), and an imported beet records its
//     next ping on every instance at once, with nothing to invalidate.
//   - Does a link-preview bot's request count (allow_bots)? Bot requests
//     are rare; they are looked up, and allow_bots changes take effect
//     within the TTL.
//
// A stale hit cannot record an event for a rotated token: the commit
// decides. Size and TTL bound its memory under a flood of random tokens.
type tokenCache struct {
	lru *ttlLRU[string, tokenEntry]
}

// tokenEntry is what a token resolved to; beetID 0 means no beet has it.
type tokenEntry struct {
	beetID    int64
	allowBots bool
}

const (
	tokenCacheSize = 100_000
	tokenCacheTTL  = 30 * time.Second
)

func newTokenCache(size int, ttl time.Duration) *tokenCache {
	return &tokenCache{lru: newTTLLRU[string, tokenEntry](size, ttl)}
}

func (c *tokenCache) get(token string) (tokenEntry, bool) { return c.lru.Get(token) }

// put remembers what token resolved to, but not a UUID token's miss (see
// tokenCache).
func (c *tokenCache) put(token string, e tokenEntry) {
	if e.beetID == 0 && beet.IsUUIDToken(token) {
		return
	}
	c.lru.Add(token, e)
}

// ttlLRU is a size-bounded LRU whose entries expire after ttl. It checks
// expiry when an entry is read, so it runs no goroutine: the expirable LRU
// of golang-lru starts a clean-up goroutine per cache that nothing can
// stop, one more for every handler ever built (goleak found it).
type ttlLRU[K comparable, V any] struct {
	lru *lru.Cache[K, ttlEntry[V]]
	ttl time.Duration
	now func() time.Time
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLLRU[K comparable, V any](size int, ttl time.Duration) *ttlLRU[K, V] {
	c, err := lru.New[K, ttlEntry[V]](size)
	if err != nil {
		panic(err) // only for a size <= 0, a constant here
	}
	return &ttlLRU[K, V]{lru: c, ttl: ttl, now: time.Now}
}

// Get returns the value of key if it is there and younger than the TTL.
func (c *ttlLRU[K, V]) Get(key K) (V, bool) {
	e, ok := c.lru.Get(key)
	if !ok || !c.now().Before(e.expires) {
		if ok {
			c.lru.Remove(key)
		}
		var zero V
		return zero, false
	}
	return e.v, true
}

// Add stores key's value for the TTL, evicting the least recently used
// entry when full.
func (c *ttlLRU[K, V]) Add(key K, v V) { c.lru.Add(key, ttlEntry[V]{v, c.now().Add(c.ttl)}) }

// Len is how many entries are held, expired ones not yet read included.
func (c *ttlLRU[K, V]) Len() int { return c.lru.Len() }
