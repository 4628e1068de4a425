package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/beethq/beet"
)

// SetAccountTimezone sets the zone new beets take.
func (db *DB) SetAccountTimezone(ctx context.Context, accountID int64, tz string) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE accounts SET timezone = $1 WHERE id = $2`, tz, accountID))
	if err != nil {
		return fmt.Errorf("set account time zone: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("set account time zone: %w", beet.Errorf(beet.ENOTFOUND, "account %d not found", accountID))
	}
	return nil
}

// SetAccountBadgeKey replaces the badge key if it is still old.
func (db *DB) SetAccountBadgeKey(ctx context.Context, accountID int64, old, key string) (bool, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE accounts SET badge_key = $1 WHERE id = $2 AND badge_key = $3`,
		key, accountID, old))
	if err != nil {
		return false, fmt.Errorf("set badge key: %w", err)
	}
	return n == 1, nil
}

// FindUserByID returns the user or ENOTFOUND.
func (db *DB) FindUserByID(ctx context.Context, id int64) (*beet.User, error) {
	u, err := scanUser(db.read.QueryRowContext(ctx, `SELECT id, account_id, email, password_hash, created_at
		FROM users WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find user: %w", notFound(err, "user %d not found", id))
	}
	return u, nil
}

// SetUserPassword replaces the hash and ends the user's other sessions in
// one transaction: whoever knew the old password is signed out with it.
func (db *DB) SetUserPassword(ctx context.Context, userID int64, hash string, keep []byte) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		n, err := rowsAffected(tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, hash, userID))
		if err != nil {
			return err
		}
		if n == 0 {
			return beet.Errorf(beet.ENOTFOUND, "user %d not found", userID)
		}
		if keep == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id_hash <> $2`, userID, keep)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return nil
}

// DeleteUser removes one of the account's users (its sessions cascade),
// never the last one, even when two people remove each other at once.
func (db *DB) DeleteUser(ctx context.Context, accountID, userID int64) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		// Two people removing each other at once: the account row
		// serialises them.
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE id = $1`+db.d.forUpdate(), accountID).Scan(&one); err != nil {
			return notFound(err, "account %d not found", accountID)
		}
		var owner int64
		if err := tx.QueryRowContext(ctx, `SELECT account_id FROM users WHERE id = $1`, userID).Scan(&owner); err != nil {
			return notFound(err, "user %d not found", userID)
		}
		if owner != accountID {
			return beet.Errorf(beet.ENOTFOUND, "user %d not found", userID)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE account_id = $1`, accountID).Scan(&n); err != nil {
			return err
		}
		if n <= 1 {
			return beet.Errorf(beet.ECONFLICT, "this is the account's only user; an account needs at least one")
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = $1`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete user: %w", err)
	}
	return nil
}

// SetBeetTags replaces the beet's tags.
func (db *DB) SetBeetTags(ctx context.Context, beetID int64, tags []string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM beet_tags WHERE beet_id = $1`, beetID); err != nil {
			return err
		}
		for _, t := range tags {
			if _, err := tx.ExecContext(ctx, `INSERT INTO beet_tags (beet_id, tag) VALUES ($1, $2)`, beetID, t); err != nil {
				return err
			}
		}
		return nil
	})
	if db.d.isForeignKey(err) {
		err = beet.Errorf(beet.ENOTFOUND, "beet %d not found", beetID)
	}
	if err != nil {
		return fmt.Errorf("set beet tags: %w", err)
	}
	return nil
}

// FindBeetTags returns the tags of each beet that has any, sorted.
func (db *DB) FindBeetTags(ctx context.Context, beetIDs []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(beetIDs) == 0 {
		return out, nil
	}
	marks := make([]string, len(beetIDs))
	args := make([]any, len(beetIDs))
	for i, id := range beetIDs {
		marks[i], args[i] = "$"+strconv.Itoa(i+1), id
	}
	rows, err := db.read.QueryContext(ctx, `SELECT beet_id, tag FROM beet_tags WHERE beet_id IN (`+strings.Join(marks, ", ")+`)
		ORDER BY beet_id, tag`, args...)
	if err != nil {
		return nil, fmt.Errorf("find beet tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, fmt.Errorf("find beet tags: %w", err)
		}
		out[id] = append(out[id], tag)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find beet tags: %w", err)
	}
	return out, nil
}

// FindAccountTags returns every tag the account's beets use, sorted.
func (db *DB) FindAccountTags(ctx context.Context, accountID int64) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT t.tag FROM beet_tags t JOIN beets b ON b.id = t.beet_id
		WHERE b.account_id = $1 ORDER BY t.tag`, accountID)
	if err != nil {
		return nil, fmt.Errorf("find account tags: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var tag string
		if err := rows.Scan(&tag); err != nil {
			return nil, fmt.Errorf("find account tags: %w", err)
		}
		out = append(out, tag)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find account tags: %w", err)
	}
	return out, nil
}
