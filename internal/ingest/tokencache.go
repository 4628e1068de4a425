package ingest

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// tokenCache remembers what a token resolved to. The request path does not
// look tokens up (the commit matches each event to the beet that has its
// token then, in one statement for the whole group); the cache answers the
// two questions asked before that:
//
//   - Is this token known to be no beet's? Commits report the tokens that
//     matched nothing, so a rotated or deleted beet's token that keeps
//     being sent costs no commit. A cached miss cannot hide a beet: a
//     token is fresh randomness when a beet gets it, that nobody could
//     have sent before, and it never passes to another beet.
//   - Does a link-preview bot's request count (allow_bots)? Bot requests
//     are rare; they are looked up, and allow_bots changes take effect
//     within the TTL.
//
// A stale hit cannot record an event for a rotated token: the commit
// decides. Size and TTL bound its memory under a flood of random tokens.
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
