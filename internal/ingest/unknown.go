package ingest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/beethq/beet"
)

// Requests whose token matches no beet record nothing (CONTRACT §1), but
// they should not vanish either: a job still using a rotated token, or a
// mistyped one, is a problem its owner wants to see. The unknownRecorder
// keeps, per instance and in bounded memory:
//
//   - the recent unknown tokens, by shape and redacted prefix, with the
//     last client address and user agent and a count. A token shaped like
//     a mistyped one is also kept whole, in memory only and never shown,
//     so that the dashboard can say which of the viewer's beets it was
//     probably meant for (UnknownTokensNear);
//   - for a well-formed token that was a beet's until a rotation in the
//     last beet.RotatedTokenGrace, the hits, written to the beet's old
//     token in batches once a second.
//
// A malformed token costs a map update and no database work; a
// well-formed unknown one (it passed the checksum, so someone had a real
// token once) is looked up off the request path, through a queue that
// drops what it cannot take and a cache of what it found.
const (
	maxUnknownTokens = 200              // recent unknown tokens kept
	unknownQueue     = 1024             // well-formed misses waiting for a lookup
	rotatedCacheSize = 10_000           // lookups remembered...
	rotatedCacheTTL  = time.Minute      // ... for this long
	maxPendingHits   = 10_000           // distinct old tokens between two flushes
	hitFlushEvery    = time.Second      // how often old-token hits are written
	flushTimeout     = 5 * time.Second  // one write of them
	lookupTimeout    = 2 * time.Second  // one old-token lookup
	shapeNoBeet      = "no beet has it" // a well-formed token that matches nothing
	shapeRotated     = "an old token of a beet, rotated out"
	// typoSlack is how many characters a token kept for matching may be
	// longer or shorter than a real one (a character lost or doubled).
	typoSlack = 2
)

// RotatedStore is what attributing old tokens' hits needs.
type RotatedStore interface {
	FindRotatedToken(ctx context.Context, hash []byte, since time.Time) (*beet.RotatedToken, error)
	AddRotatedTokenHits(ctx context.Context, hits []beet.RotatedTokenHit) error
}

// UnknownStats counts requests with tokens that matched no beet, by
// outcome, for metrics.
type UnknownStats struct {
	Malformed atomic.Int64 // wrong prefix, length, alphabet or checksum
	Unknown   atomic.Int64 // well-formed, no beet has it now or had it lately
	Rotated   atomic.Int64 // a beet's token until a recent rotation
	Dropped   atomic.Int64 // well-formed misses not looked up: the queue was full
}

type unknownHit struct {
	token, addr, ua string
	at              time.Time
}

type unknownKey struct{ prefix, shape string }

// unknownEntry is one recent unknown token; sent is the token itself when
// it may be a typo of a live one (typoShaped), else "".
type unknownEntry struct {
	beet.UnknownToken
	sent string
}

// typoShaped says whether a malformed token could be a live token with a
// character or two wrong, lost or added: the prefix, and about the length.
func typoShaped(token string) bool {
	return strings.HasPrefix(token, beet.TokenPrefix) && len(token) >= beet.TokenLen-typoSlack && len(token) <= beet.TokenLen+typoSlack
}

type unknownRecorder struct {
	store RotatedStore // nil: no attribution, every well-formed miss is unknown
	log   *slog.Logger
	queue chan unknownHit
	done  chan struct{}
	stats UnknownStats

	// The writer's last replay may hand over misses after close: they are
	// then noted in memory only.
	closeMu sync.RWMutex
	closed  bool

	mu      sync.Mutex
	recent  *simplelru.LRU[unknownKey, *unknownEntry]
	pending map[string]*beet.RotatedTokenHit // by hash
	rotated *ttlLRU[string, int64]           // hash → the beet it was rotated out of lately, or 0
}

func newUnknownRecorder(store RotatedStore, log *slog.Logger) *unknownRecorder {
	recent, _ := simplelru.NewLRU[unknownKey, *unknownEntry](maxUnknownTokens, nil)
	u := &unknownRecorder{
		store: store, log: log, queue: make(chan unknownHit, unknownQueue), done: make(chan struct{}),
		recent: recent, pending: map[string]*beet.RotatedTokenHit{},
		rotated: newTTLLRU[string, int64](rotatedCacheSize, rotatedCacheTTL),
	}
	go u.run()
	return u
}

// malformed notes a token that cannot be valid, in memory only.
func (u *unknownRecorder) malformed(token, addr, ua string, at time.Time) {
	u.stats.Malformed.Add(1)
	u.remember(token, tokenShape(token), 0, addr, ua, at)
}

// miss queues a well-formed token that matched no beet for a lookup among
// rotated tokens. It never blocks.
func (u *unknownRecorder) miss(token, addr, ua string, at time.Time) {
	u.closeMu.RLock()
	defer u.closeMu.RUnlock()
	if u.closed {
		u.stats.Unknown.Add(1)
		u.remember(token, shapeNoBeet, 0, addr, ua, at)
		return
	}
	select {
	case u.queue <- unknownHit{token: token, addr: addr, ua: ua, at: at}:
	default:
		u.stats.Dropped.Add(1)
		u.stats.Unknown.Add(1)
		u.remember(token, shapeNoBeet, 0, addr, ua, at)
	}
}

// remember notes a request; beetID is the beet an old token was rotated
// out of, or 0.
func (u *unknownRecorder) remember(token, shape string, beetID int64, addr, ua string, at time.Time) {
	key := unknownKey{prefix: printable(beet.Redact(token)), shape: shape}
	ua = cut(ua, beet.MaxUserAgentLen)
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.recent.Get(key)
	if !ok {
		e = &unknownEntry{UnknownToken: beet.UnknownToken{Prefix: key.prefix, Shape: shape, First: at, BeetID: beetID, Rotated: beetID != 0}}
		u.recent.Add(key, e)
	}
	if beetID == 0 && shape != shapeNoBeet && typoShaped(token) {
		e.sent = token
	}
	e.Count++
	e.Addr, e.UserAgent = addr, ua
	if at.After(e.Last) {
		e.Last = at
	}
}

// recentTokens returns a copy of the recent unknown tokens, the latest
// first. near, if not nil, is asked about each token kept whole (a likely
// typo) and answers the beet it was probably meant for, or 0; the token
// goes no further than near.
func (u *unknownRecorder) recentTokens(near func(sent string) int64) []beet.UnknownToken {
	u.mu.Lock()
	out := make([]beet.UnknownToken, 0, u.recent.Len())
	var sent []string
	for _, e := range u.recent.Values() {
		out = append(out, e.UnknownToken)
		sent = append(sent, e.sent)
	}
	u.mu.Unlock()
	if near != nil {
		for i := range out {
			if sent[i] != "" && out[i].BeetID == 0 {
				out[i].BeetID = near(sent[i])
			}
		}
	}
	slices.SortFunc(out, func(a, b beet.UnknownToken) int {
		return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Prefix, b.Prefix))
	})
	return out
}

func (u *unknownRecorder) run() {
	defer close(u.done)
	tick := time.NewTicker(hitFlushEvery)
	defer tick.Stop()
	for {
		select {
		case h, ok := <-u.queue:
			if !ok {
				u.flush()
				return
			}
			u.lookup(h)
		case <-tick.C:
			u.flush()
		}
	}
}

// lookup attributes a well-formed miss to a rotated token, or remembers it
// as unknown.
func (u *unknownRecorder) lookup(h unknownHit) {
	hash := beet.TokenHash(h.token)
	key := string(hash)
	rotatedFrom, known := u.rotated.Get(key)
	if !known && u.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		rt, err := u.store.FindRotatedToken(ctx, hash, h.at.Add(-beet.RotatedTokenGrace))
		cancel()
		switch {
		case err == nil:
			rotatedFrom, known = rt.BeetID, true
		case beet.IsNotFound(err):
			known = true
		default:
			u.log.Debug("old-token lookup failed", "token", beet.Redact(h.token), "err", err)
		}
		if known {
			u.rotated.Add(key, rotatedFrom)
		}
	}
	if rotatedFrom == 0 {
		u.stats.Unknown.Add(1)
		u.remember(h.token, shapeNoBeet, 0, h.addr, h.ua, h.at)
		return
	}
	u.stats.Rotated.Add(1)
	// Also among the recent ones, so the dashboard can say which beet it
	// was (to that beet's account only).
	u.remember(h.token, shapeRotated, rotatedFrom, h.addr, h.ua, h.at)
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.pending[key]
	if p == nil {
		if len(u.pending) >= maxPendingHits {
			return // counted in metrics; the beet's count runs short until the next flush
		}
		p = &beet.RotatedTokenHit{Hash: hash}
		u.pending[key] = p
	}
	p.Count++
	if !h.at.Before(p.At) {
		p.At, p.Addr, p.UserAgent = h.at, h.addr, cut(h.ua, beet.MaxUserAgentLen)
	}
}

// flush writes the old tokens' hits gathered since the last flush.
func (u *unknownRecorder) flush() {
	u.mu.Lock()
	if len(u.pending) == 0 {
		u.mu.Unlock()
		return
	}
	hits := make([]beet.RotatedTokenHit, 0, len(u.pending))
	for _, p := range u.pending {
		hits = append(hits, *p)
	}
	clear(u.pending)
	u.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := u.store.AddRotatedTokenHits(ctx, hits); err != nil {
		u.log.Warn("could not count hits with old tokens", "tokens", len(hits), "err", err)
	}
}

// close looks up what is queued, writes the last hits and stops.
func (u *unknownRecorder) close() {
	u.closeMu.Lock()
	if !u.closed {
		u.closed = true
		close(u.queue)
	}
	u.closeMu.Unlock()
	<-u.done
}

// tokenShape says what is wrong with a token that cannot be valid.
func tokenShape(s string) string {
	switch {
	case s == "":
		return "empty"
	case strings.HasPrefix(s, beet.APIKeyPrefix):
		return "an API key, not an ingestion token"
	case !strings.HasPrefix(s, beet.TokenPrefix):
		return fmt.Sprintf("no %s prefix", beet.TokenPrefix)
	case len(s) != beet.TokenLen:
		return fmt.Sprintf("wrong length (%d characters, want %d)", len(s), beet.TokenLen)
	}
	for i := len(beet.TokenPrefix); i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "characters outside the token alphabet"
		}
	}
	return "checksum does not match (mistyped or made up)"
}

// printable replaces control and invalid characters, so a prefix of
// garbage shows as text.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
