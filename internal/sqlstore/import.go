package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/beethq/beet"
)

// CreateImportedBeet creates b with its tags, its state and flips, and
// notes its source key, in one transaction, so that a crash never leaves
// an imported beet that a second run of the import would not recognise,
// nor one without the state it was imported in.
func (db *DB) CreateImportedBeet(ctx context.Context, b *beet.Beet, tags []string, sourceKey string, flips []beet.Flip) error {
	nb, detection, err := newBeetRow(b)
	if err != nil {
		return fmt.Errorf("create imported beet: %w", err)
	}
	if nb.DueAt != nil {
		due := stamp(*nb.DueAt)
		nb.DueAt = &due
	}
	if len(flips) > 0 {
		nb.StatusSince = stamp(flips[len(flips)-1].At)
	}
	var imported bool
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT beet_id FROM beet_imports WHERE account_id = $1 AND source_key = $2`,
			nb.AccountID, sourceKey).Scan(&id)
		if err == nil {
			imported = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := insertBeet(ctx, tx, &nb, detection); err != nil {
			return err
		}
		if len(flips) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE beets SET status_since = $1, due_at = $2 WHERE id = $3`,
				toMicros(nb.StatusSince), nilMicros(nb.DueAt), nb.ID); err != nil {
				return err
			}
			for _, f := range flips {
				f.BeetID, f.At = nb.ID, stamp(f.At)
				if err := insertFlip(ctx, tx, &f); err != nil {
					return err
				}
			}
		}
		for _, t := range tags {
			if _, err := tx.ExecContext(ctx, `INSERT INTO beet_tags (beet_id, tag) VALUES ($1, $2)`, nb.ID, t); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO beet_imports (account_id, source_key, beet_id) VALUES ($1, $2, $3)`,
			nb.AccountID, sourceKey, nb.ID)
		return err
	})
	switch {
	case imported:
		return fmt.Errorf("create imported beet: %w",
			&beet.Error{Code: beet.ECONFLICT, Field: "source_key", Message: "the account imported this check already"})
	case db.d.isUnique(err):
		return fmt.Errorf("create imported beet: %w", tokenTaken())
	case db.d.isForeignKey(err):
		return fmt.Errorf("create imported beet: %w", beet.Errorf(beet.ENOTFOUND, "account %d not found", nb.AccountID))
	case err != nil:
		return fmt.Errorf("create imported beet: %w", err)
	}
	nb.Tags = tags
	*b = nb
	return nil
}

// FindImportedBeet returns the ID of the account's beet imported as
// sourceKey, or an ENOTFOUND error.
func (db *DB) FindImportedBeet(ctx context.Context, accountID int64, sourceKey string) (int64, error) {
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT beet_id FROM beet_imports WHERE account_id = $1 AND source_key = $2`,
		accountID, sourceKey).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("find imported beet: %w", notFound(err, "no beet imported as %s", sourceKey))
	}
	return id, nil
}
