package beet

import (
	"context"
	"time"
)

// Session is a signed-in browser. The cookie holds a random ID; the store
// keeps only its SHA-256 (IDHash), so a copy of the database signs nobody in.
type Session struct {
	IDHash     []byte
	UserID     int64
	AccountID  int64
	CreatedAt  time.Time
	LastSeenAt time.Time // moved forward as the session is used (idle expiry)
	ExpiresAt  time.Time // absolute expiry, fixed at sign-in
}

// SessionStore keeps dashboard sessions.
type SessionStore interface {
	// CreateSession inserts s; a hash already stored is ECONFLICT.
	CreateSession(ctx context.Context, s *Session) error
	// FindSessionByHash returns the session or ENOTFOUND; callers check
	// the expiry times.
	FindSessionByHash(ctx context.Context, hash []byte) (*Session, error)
	// TouchSession sets the session's last use.
	TouchSession(ctx context.Context, hash []byte, at time.Time) error
	// DeleteSession removes one session (sign-out); a missing one is fine.
	DeleteSession(ctx context.Context, hash []byte) error
	// DeleteExpiredSessions removes up to limit sessions whose absolute
	// expiry is before t or whose last use is before idleBefore, and
	// returns how many it removed.
	DeleteExpiredSessions(ctx context.Context, t, idleBefore time.Time, limit int) (int64, error)
}
