package beet

import (
	"context"
	"crypto/sha256"
	"time"
)

// RotatedTokenGrace is how long hits with a beet's old token are still
// attributed to it after a rotation. They never record an event.
const RotatedTokenGrace = 7 * 24 * time.Hour

// MaxRotatedTokens bounds the old tokens kept per beet; older ones go.
const MaxRotatedTokens = 10

// RotatedToken is one of a beet's old tokens within the grace window after
// its rotation, with the requests it still received. It keeps only a hash
// and a redacted prefix of the token.
type RotatedToken struct {
	BeetID        int64
	Prefix        string // beet.Redact of the old token
	RotatedAt     time.Time
	Hits          int64
	LastHitAt     *time.Time
	LastAddr      string // the last hit's client address
	LastUserAgent string
}

// RotatedTokenHit is one or more requests with an old token, counted
// together (RotatedTokenStore.AddRotatedTokenHits).
type RotatedTokenHit struct {
	Hash      []byte // TokenHash of the old token
	Count     int64
	At        time.Time // the last one's
	Addr      string
	UserAgent string
}

// TokenHash is how an old token is kept: its SHA-256.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// RotatedTokenStore keeps old tokens through their grace window.
type RotatedTokenStore interface {
	// FindRotatedToken returns the old token with that hash if it was
	// rotated after since, or an ENOTFOUND error.
	FindRotatedToken(ctx context.Context, hash []byte, since time.Time) (*RotatedToken, error)
	// AddRotatedTokenHits adds hits to their tokens; hits for tokens no
	// longer kept are ignored.
	AddRotatedTokenHits(ctx context.Context, hits []RotatedTokenHit) error
	// FindRotatedTokens returns the beet's old tokens rotated after since,
	// newest first.
	FindRotatedTokens(ctx context.Context, beetID int64, since time.Time) ([]*RotatedToken, error)
}
