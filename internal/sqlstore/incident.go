package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

// CountSilences counts the beets flipped to down since t, through the
// partial index on those flips.
func (db *DB) CountSilences(ctx context.Context, since time.Time) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(DISTINCT beet_id) FROM flips WHERE to_status = 'down' AND at >= $1`,
		toMicros(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count silences: %w", err)
	}
	return n, nil
}

// CountWatched counts the beets with a deadline from the deadline index
// alone (only up beets have one), without reading the rows.
func (db *DB) CountWatched(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM beets WHERE `+db.d.withDeadline()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count watched beets: %w", err)
	}
	return n, nil
}

// SilentAccounts returns up to limit distinct accounts of the beets
// flipped to down since t.
func (db *DB) SilentAccounts(ctx context.Context, since time.Time, limit int) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT b.account_id FROM flips f JOIN beets b ON b.id = f.beet_id
		WHERE f.to_status = 'down' AND f.at >= $1 LIMIT $2`, toMicros(since), limit)
	if err != nil {
		return nil, fmt.Errorf("silent accounts: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("silent accounts: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// CountWatchedAccounts counts the accounts with a beet that has a deadline.
func (db *DB) CountWatchedAccounts(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(DISTINCT account_id) FROM beets WHERE `+db.d.withDeadline()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count watched accounts: %w", err)
	}
	return n, nil
}

// incidentColumns reads an incident with its counts of held beets, over
// the beets b that match where (a condition on b, "1=1" for all).
func incidentColumns(where string) string {
	return `id, started_at, ended_at, reason, end_reason,
	(SELECT count(*) FROM held_beets h JOIN beets b ON b.id = h.beet_id
	  WHERE h.incident_id = incidents.id AND ` + where + `),
	(SELECT count(*) FROM held_beets h JOIN beets b ON b.id = h.beet_id
	  WHERE h.incident_id = incidents.id AND ` + where + ` AND b.last_event_at >= incidents.started_at)`
}

func scanIncident(s scanner) (*beet.Incident, error) {
	var (
		inc     beet.Incident
		started int64
		ended   sql.NullInt64
	)
	if err := s.Scan(&inc.ID, &started, &ended, &inc.Reason, &inc.EndReason, &inc.Held, &inc.Back); err != nil {
		return nil, err
	}
	inc.StartedAt, inc.EndedAt = fromMicros(started), fromNullMicros(ended)
	return &inc, nil
}

// OpenIncident returns the open incident or nil.
func (db *DB) OpenIncident(ctx context.Context) (*beet.Incident, error) {
	inc, err := scanIncident(db.read.QueryRowContext(ctx, `SELECT `+incidentColumns("1=1")+` FROM incidents WHERE open = 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open incident: %w", err)
	}
	return inc, nil
}

// StartIncident opens inc; the unique open column makes a second open
// incident a conflict, so two sweepers open one.
func (db *DB) StartIncident(ctx context.Context, inc *beet.Incident) error {
	ni := *inc
	ni.StartedAt = stamp(ni.StartedAt)
	err := db.write.QueryRowContext(ctx, `INSERT INTO incidents (started_at, open, reason) VALUES ($1, 1, $2) RETURNING id`,
		toMicros(ni.StartedAt), ni.Reason).Scan(&ni.ID)
	if db.d.isUnique(err) {
		return fmt.Errorf("start incident: %w", beet.Errorf(beet.ECONFLICT, "an incident is already open"))
	}
	if err != nil {
		return fmt.Errorf("start incident: %w", err)
	}
	*inc = ni
	return nil
}

// HoldBeet moves a still-due deadline and records the hold, in one
// transaction.
func (db *DB) HoldBeet(ctx context.Context, incidentID, beetID int64, due, next time.Time) (bool, error) {
	held := false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		n, err := rowsAffected(tx.ExecContext(ctx, `UPDATE beets SET due_at = $1 WHERE id = $2 AND due_at = $3`,
			toMicros(next), beetID, toMicros(due)))
		if err != nil || n == 0 {
			return err
		}
		held = true
		_, err = tx.ExecContext(ctx, `INSERT INTO held_beets (incident_id, beet_id) VALUES ($1, $2)
			ON CONFLICT (incident_id, beet_id) DO NOTHING`, incidentID, beetID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("hold beet: %w", err)
	}
	return held, nil
}

// EndIncident closes the open incident id.
func (db *DB) EndIncident(ctx context.Context, id int64, at time.Time, reason string) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE incidents SET open = NULL, ended_at = $1, end_reason = $2
		WHERE id = $3 AND open = 1`, toMicros(stamp(at)), reason, id))
	if err != nil {
		return fmt.Errorf("end incident: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("end incident: %w", beet.Errorf(beet.ECONFLICT, "incident %d is not open", id))
	}
	return nil
}

// FindIncidents returns the latest incidents, newest first, with the
// account's own held beets counted.
func (db *DB) FindIncidents(ctx context.Context, accountID int64, limit int) ([]*beet.Incident, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+incidentColumns("b.account_id = $1")+` FROM incidents ORDER BY id DESC LIMIT $2`,
		accountID, pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find incidents: %w", err)
	}
	defer rows.Close()
	var out []*beet.Incident
	for rows.Next() {
		inc, err := scanIncident(rows)
		if err != nil {
			return nil, fmt.Errorf("find incidents: %w", err)
		}
		out = append(out, inc)
	}
	return out, rows.Err()
}
