package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

const apiKeyColumns = `id, account_id, name, prefix, hash, created_at, revoked_at, read_only`

// CreateAPIKey inserts k and sets its ID. A hash already stored is
// ECONFLICT; an unknown account is ENOTFOUND.
func (db *DB) CreateAPIKey(ctx context.Context, k *beet.APIKey) error {
	key := *k
	key.CreatedAt = stamp(key.CreatedAt)
	if key.RevokedAt != nil {
		t := stamp(*key.RevokedAt)
		key.RevokedAt = &t
	}
	err := db.write.QueryRowContext(ctx, `INSERT INTO api_keys (account_id, name, prefix, hash, created_at, revoked_at, read_only)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		key.AccountID, key.Name, key.Prefix, key.Hash, toMicros(key.CreatedAt), nullMicros(key.RevokedAt), key.ReadOnly).Scan(&key.ID)
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("create api key: %w", beet.Errorf(beet.ECONFLICT, "an API key with this hash already exists"))
	case db.d.isForeignKey(err):
		return fmt.Errorf("create api key: %w", beet.Errorf(beet.ENOTFOUND, "account %d not found", key.AccountID))
	case err != nil:
		return fmt.Errorf("create api key: %w", err)
	}
	*k = key
	return nil
}

// FindAPIKeyByHash returns the key with that hash even if revoked; callers
// check RevokedAt.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash []byte) (*beet.APIKey, error) {
	k, err := scanAPIKey(db.read.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1`, hash))
	if err != nil {
		return nil, fmt.Errorf("find api key: %w", notFound(err, "API key not found"))
	}
	return k, nil
}

// FindAPIKeyByID returns the key or an ENOTFOUND error.
func (db *DB) FindAPIKeyByID(ctx context.Context, id int64) (*beet.APIKey, error) {
	k, err := scanAPIKey(db.read.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find api key: %w", notFound(err, "API key %d not found", id))
	}
	return k, nil
}

// FindAPIKeys returns the account's keys, revoked ones included, in ID order.
func (db *DB) FindAPIKeys(ctx context.Context, accountID int64) ([]*beet.APIKey, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("find api keys: %w", err)
	}
	defer rows.Close()
	out := []*beet.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("find api keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find api keys: %w", err)
	}
	return out, nil
}

// RevokeAPIKey marks the key revoked at the given time; revoking twice keeps
// the first time.
func (db *DB) RevokeAPIKey(ctx context.Context, id int64, at time.Time) error {
	n, err := rowsAffected(db.write.ExecContext(ctx,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, toMicros(stamp(at)), id))
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("revoke api key: %w", beet.Errorf(beet.ENOTFOUND, "API key %d not found", id))
	}
	return nil
}

func scanAPIKey(s scanner) (*beet.APIKey, error) {
	var (
		k       beet.APIKey
		created int64
		revoked sql.NullInt64
	)
	if err := s.Scan(&k.ID, &k.AccountID, &k.Name, &k.Prefix, &k.Hash, &created, &revoked, &k.ReadOnly); err != nil {
		return nil, err
	}
	k.CreatedAt, k.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return &k, nil
}
