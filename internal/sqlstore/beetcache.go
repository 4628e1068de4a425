package sqlstore

import (
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/beethq/beet"
)

// beetCache keeps the beets AddEvents wrote, as they stood after its
// commit, with the row version that commit gave them (the version column,
// which a trigger raises on every other change). A commit then reads only
// (id, version) of its beets: where the version matches, the copy
// is the row and the full read, its decoding and the detection state it
// carries are skipped; where it does not (the sweeper, the API, a
// rotation or another instance changed the row), the row is read in full.
// So the cache can be stale but never wrong. It knows nothing of what the
// beet's fields mean; get hands out deep copies, so a commit that changes
// its beets (and may fail) never touches an entry.
type beetCache struct {
	byID *lru.Cache[int64, cachedBeet]
	// byToken is where a token was last seen: a hint, checked against the
	// row read (misprobed). A bt_ token never moves to another beet, but
	// it leaves its beet on a rotation, and a UUID token moves when its
	// imported beet is deleted and imported again.
	byToken *lru.Cache[string, int64]
}

type cachedBeet struct {
	b       *beet.Beet
	version int64
}

// beetCacheSize bounds the cache: about 600 B a beet with its model, so
// about 40 MB when full, and the beets that send often stay in it.
const beetCacheSize = 65536

func newBeetCache(size int) *beetCache {
	byID, _ := lru.New[int64, cachedBeet](size)
	byToken, _ := lru.New[string, int64](size)
	return &beetCache{byID: byID, byToken: byToken}
}

// idOf returns the beet ID a token was last seen with.
func (c *beetCache) idOf(token string) (int64, bool) { return c.byToken.Get(token) }

// get returns a copy of the beet if the cache holds it at version.
func (c *beetCache) get(id, version int64) (*beet.Beet, bool) {
	e, ok := c.byID.Get(id)
	if !ok || e.version != version {
		return nil, false
	}
	return cloneBeet(e.b), true
}

// latest returns a copy of the newest version the cache holds of the beet,
// and that version.
func (c *beetCache) latest(id int64) (*beet.Beet, int64, bool) {
	e, ok := c.byID.Get(id)
	if !ok {
		return nil, 0, false
	}
	return cloneBeet(e.b), e.version, true
}

// take removes the beet and hands over the cache's own copy, and its
// version, without copying it: the commit that takes it changes it and
// keeps it again once committed, and a commit that fails leaves it out.
func (c *beetCache) take(id int64) (*beet.Beet, int64, bool) {
	e, ok := c.byID.Peek(id)
	if !ok {
		return nil, 0, false
	}
	c.byID.Remove(id)
	return e.b, e.version, true
}

// keep keeps b at version, unless a newer version is kept. b itself is
// kept, not a copy: the caller hands over a beet that nothing else refers
// to or changes from then on (get hands out copies).
func (c *beetCache) keep(b *beet.Beet, version int64) {
	if e, ok := c.byID.Peek(b.ID); ok && e.version > version {
		return
	}
	c.byID.Add(b.ID, cachedBeet{b: b, version: version})
	c.byToken.Add(b.Token, b.ID)
}

// drop forgets the beet (its token stays: misprobed checks it when used).
func (c *beetCache) drop(id int64) { c.byID.Remove(id) }

// purge forgets every beet.
func (c *beetCache) purge() { c.byID.Purge() }

// cloneBeet copies b and everything it points to.
func cloneBeet(b *beet.Beet) *beet.Beet {
	c := *b
	c.LastEventAt = clonePtr(b.LastEventAt)
	c.DueAt = clonePtr(b.DueAt)
	c.Model = slices.Clone(b.Model)
	c.Runs.StartedAt = clonePtr(b.Runs.StartedAt)
	c.Runs.ByRID = slices.Clone(b.Runs.ByRID)
	c.Runs.RecentMS = slices.Clone(b.Runs.RecentMS)
	c.Channels = slices.Clone(b.Channels)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
