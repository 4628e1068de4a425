package ingest

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// tokenCache remembers what a token resolved to, so that the hot path does
// not query the database on every request (profiling showed the lookup to
// be most of a request's cost). It is safe without invalidation:
//
//   - A stale hit for a rotated or deleted beet's token costs nothing: the
//     event carries the token, and the store keeps it only if the beet
//     still has that token at commit (so rotation kills the old token at
//     once, on every instance).
//   - A cached miss cannot hide a new beet: a new token is fresh randomness
//     that nobody could have sent before it existed.
//   - allow_bots changes take effect within the TTL.
//
// Size and TTL bound its memory under a flood of random tokens.
type tokenCache struct {
	lru *expirable.LRU[string, tokenEntry]
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
	return &tokenCache{lru: expirable.NewLRU[string, tokenEntry](size, nil, ttl)}
}

func (c *tokenCache) get(token string) (tokenEntry, bool) { return c.lru.Get(token) }
func (c *tokenCache) put(token string, e tokenEntry)      { c.lru.Add(token, e) }
