package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

// CreateSession inserts s; a hash already stored is ECONFLICT.
func (db *DB) CreateSession(ctx context.Context, s *beet.Session) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO sessions (id_hash, user_id, account_id, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		s.IDHash, s.UserID, s.AccountID, toMicros(s.CreatedAt), toMicros(s.LastSeenAt), toMicros(s.ExpiresAt))
	if db.d.isUnique(err) {
		return fmt.Errorf("create session: %w", beet.Errorf(beet.ECONFLICT, "session exists"))
	}
	if db.d.isForeignKey(err) {
		return fmt.Errorf("create session: %w", beet.Errorf(beet.ENOTFOUND, "user %d not found", s.UserID))
	}
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// FindSessionByHash returns the session or ENOTFOUND.
func (db *DB) FindSessionByHash(ctx context.Context, hash []byte) (*beet.Session, error) {
	stmt, err := db.prepared(ctx, db.read, `SELECT id_hash, user_id, account_id, created_at, last_seen_at, expires_at
		FROM sessions WHERE id_hash = $1`)
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	var (
		s                      beet.Session
		created, seen, expires int64
	)
	err = stmt.QueryRowContext(ctx, hash).Scan(&s.IDHash, &s.UserID, &s.AccountID, &created, &seen, &expires)
	if err != nil {
		return nil, fmt.Errorf("find session: %w", notFound(err, "no such session"))
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return &s, nil
}

// TouchSession moves the session's last use forward (never back).
func (db *DB) TouchSession(ctx context.Context, hash []byte, at time.Time) error {
	_, err := db.write.ExecContext(ctx, `UPDATE sessions SET last_seen_at = $1 WHERE id_hash = $2 AND last_seen_at < $1`,
		toMicros(at), hash)
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// DeleteSession removes one session.
func (db *DB) DeleteSession(ctx context.Context, hash []byte) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = $1`, hash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes up to limit expired or idle sessions in one
// short statement.
func (db *DB) DeleteExpiredSessions(ctx context.Context, t, idleBefore time.Time, limit int) (int64, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash IN (
		SELECT id_hash FROM sessions WHERE expires_at < $1 OR last_seen_at < $2 LIMIT $3`+db.d.skipLocked()+`)`,
		toMicros(t), toMicros(idleBefore), limit))
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}
