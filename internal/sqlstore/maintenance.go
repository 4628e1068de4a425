package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

const maintenanceColumns = `id, account_id, beet_id, starts_at, ends_at, cron, timezone, duration, note, created_at`

// maxMaintenanceWindows bounds the windows read for one account or beet.
const maxMaintenanceWindows = 1000

// CreateMaintenance inserts w and sets its ID.
func (db *DB) CreateMaintenance(ctx context.Context, w *beet.MaintenanceWindow) error {
	nw := *w
	nw.CreatedAt = stamp(nw.CreatedAt)
	err := db.write.QueryRowContext(ctx, `INSERT INTO maintenance_windows
		(account_id, beet_id, starts_at, ends_at, cron, timezone, duration, note, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		nw.AccountID, nullID(nw.BeetID), nullMicros(nw.Start), nullMicros(nw.End), nw.Cron, nw.Timezone,
		int64(nw.Duration/time.Second), nw.Note, toMicros(nw.CreatedAt)).Scan(&nw.ID)
	if db.d.isForeignKey(err) {
		return fmt.Errorf("create maintenance window: %w", beet.Errorf(beet.ENOTFOUND, "account or beet not found"))
	} else if err != nil {
		return fmt.Errorf("create maintenance window: %w", err)
	}
	*w = nw
	return nil
}

// FindMaintenance returns the account's windows (beetID 0) or those that
// apply to one beet: its own and the account-wide ones.
func (db *DB) FindMaintenance(ctx context.Context, accountID, beetID int64) ([]*beet.MaintenanceWindow, error) {
	q := `SELECT ` + maintenanceColumns + ` FROM maintenance_windows WHERE account_id = $1 ORDER BY id LIMIT $2`
	args := []any{accountID, maxMaintenanceWindows}
	if beetID != 0 {
		q = `SELECT ` + maintenanceColumns + ` FROM maintenance_windows WHERE account_id = $1
			AND (beet_id IS NULL OR beet_id = $3) ORDER BY id LIMIT $2`
		args = append(args, beetID)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find maintenance windows: %w", err)
	}
	defer rows.Close()
	out := []*beet.MaintenanceWindow{}
	for rows.Next() {
		w, err := scanMaintenance(rows)
		if err != nil {
			return nil, fmt.Errorf("find maintenance windows: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// FindMaintenanceByID returns the window or ENOTFOUND.
func (db *DB) FindMaintenanceByID(ctx context.Context, id int64) (*beet.MaintenanceWindow, error) {
	w, err := scanMaintenance(db.read.QueryRowContext(ctx, `SELECT `+maintenanceColumns+` FROM maintenance_windows WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find maintenance window: %w", notFound(err, "maintenance window %d not found", id))
	}
	return w, nil
}

// DeleteMaintenance removes the window.
func (db *DB) DeleteMaintenance(ctx context.Context, id int64) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM maintenance_windows WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete maintenance window: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete maintenance window: %w", beet.Errorf(beet.ENOTFOUND, "maintenance window %d not found", id))
	}
	return nil
}

func scanMaintenance(s scanner) (*beet.MaintenanceWindow, error) {
	var (
		w                 beet.MaintenanceWindow
		beetID            sql.NullInt64
		start, end        sql.NullInt64
		duration, created int64
	)
	if err := s.Scan(&w.ID, &w.AccountID, &beetID, &start, &end, &w.Cron, &w.Timezone, &duration, &w.Note, &created); err != nil {
		return nil, err
	}
	w.BeetID = beetID.Int64
	w.Start, w.End = fromNullMicros(start), fromNullMicros(end)
	w.Duration = time.Duration(duration) * time.Second
	w.CreatedAt = fromMicros(created)
	return &w, nil
}

// FindLiveMaintenance returns the windows that can still cover an instant
// after since, for the detector's in-memory view of maintenance.
func (db *DB) FindLiveMaintenance(ctx context.Context, since time.Time, limit int) ([]*beet.MaintenanceWindow, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+maintenanceColumns+` FROM maintenance_windows
		WHERE cron <> '' OR ends_at > $1 ORDER BY id LIMIT $2`, toMicros(since), limit)
	if err != nil {
		return nil, fmt.Errorf("find live maintenance windows: %w", err)
	}
	defer rows.Close()
	var out []*beet.MaintenanceWindow
	for rows.Next() {
		w, err := scanMaintenance(rows)
		if err != nil {
			return nil, fmt.Errorf("find live maintenance windows: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}
