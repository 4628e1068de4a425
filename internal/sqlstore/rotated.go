package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

// keepRotatedToken records old, the token a rotation replaces, inside the
// rotation's transaction, and drops the beet's old tokens past the grace
// window or beyond beet.MaxRotatedTokens.
func keepRotatedToken(ctx context.Context, tx *sql.Tx, beetID int64, old string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO rotated_tokens (hash, beet_id, prefix, rotated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING`,
		beet.TokenHash(old), beetID, beet.Redact(old), toMicros(at))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM rotated_tokens WHERE beet_id = $1 AND (rotated_at < $2 OR hash NOT IN (
		SELECT hash FROM rotated_tokens WHERE beet_id = $1 ORDER BY rotated_at DESC, hash LIMIT $3))`,
		beetID, toMicros(at.Add(-beet.RotatedTokenGrace)), beet.MaxRotatedTokens)
	return err
}

const rotatedColumns = `beet_id, prefix, rotated_at, hits, last_hit_at, last_addr, last_user_agent`

func scanRotated(s scanner) (*beet.RotatedToken, error) {
	var (
		t       beet.RotatedToken
		rotated int64
		last    sql.NullInt64
	)
	if err := s.Scan(&t.BeetID, &t.Prefix, &rotated, &t.Hits, &last, &t.LastAddr, &t.LastUserAgent); err != nil {
		return nil, err
	}
	t.RotatedAt, t.LastHitAt = fromMicros(rotated), fromNullMicros(last)
	return &t, nil
}

// FindRotatedToken returns the old token with that hash if it was rotated
// after since, or an ENOTFOUND error. One primary-key read; ingestion
// calls it only for well-formed tokens no beet has, off the request path.
func (db *DB) FindRotatedToken(ctx context.Context, hash []byte, since time.Time) (*beet.RotatedToken, error) {
	t, err := scanRotated(db.read.QueryRowContext(ctx, `SELECT `+rotatedColumns+` FROM rotated_tokens
		WHERE hash = $1 AND rotated_at > $2`, hash, toMicros(since)))
	if err != nil {
		return nil, fmt.Errorf("find rotated token: %w", notFound(err, "no rotated token has this hash"))
	}
	return t, nil
}

// AddRotatedTokenHits adds each hit's count to its token and makes it the
// last hit when it is newer, in one transaction.
func (db *DB) AddRotatedTokenHits(ctx context.Context, hits []beet.RotatedTokenHit) error {
	if len(hits) == 0 {
		return nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		for _, h := range hits {
			at := toMicros(stamp(h.At))
			_, err := tx.ExecContext(ctx, `UPDATE rotated_tokens SET hits = hits + $1,
				last_addr = CASE WHEN last_hit_at IS NULL OR last_hit_at <= $2 THEN $3 ELSE last_addr END,
				last_user_agent = CASE WHEN last_hit_at IS NULL OR last_hit_at <= $2 THEN $4 ELSE last_user_agent END,
				last_hit_at = CASE WHEN last_hit_at IS NULL OR last_hit_at <= $2 THEN $2 ELSE last_hit_at END
				WHERE hash = $5`, h.Count, at, h.Addr, cutString(h.UserAgent, beet.MaxUserAgentLen), h.Hash)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add rotated token hits: %w", err)
	}
	return nil
}

// FindRotatedTokens returns the beet's old tokens rotated after since,
// newest first.
func (db *DB) FindRotatedTokens(ctx context.Context, beetID int64, since time.Time) ([]*beet.RotatedToken, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+rotatedColumns+` FROM rotated_tokens
		WHERE beet_id = $1 AND rotated_at > $2 ORDER BY rotated_at DESC`, beetID, toMicros(since))
	if err != nil {
		return nil, fmt.Errorf("find rotated tokens: %w", err)
	}
	defer rows.Close()
	out := []*beet.RotatedToken{}
	for rows.Next() {
		t, err := scanRotated(rows)
		if err != nil {
			return nil, fmt.Errorf("find rotated tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find rotated tokens: %w", err)
	}
	return out, nil
}

// cutString keeps at most n bytes of s, on a UTF-8 boundary.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
