package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
)

// AddEvents stores events in one transaction and moves each beet's
// last_event_at forward, never back. Events whose ID is already stored are
// skipped, so replaying a batch is harmless. Events of beets that no longer
// exist are dropped: a beet deleted while its events waited in a buffer
// must not make the rest of the batch fail.
func (db *DB) AddEvents(ctx context.Context, events []beet.Event) error {
	if len(events) == 0 {
		return nil
	}
	latest := make(map[int64]int64)
	for i := range events {
		us := toMicros(events[i].ReceivedAt)
		if cur, ok := latest[events[i].BeetID]; !ok || us > cur {
			latest[events[i].BeetID] = us
		}
	}
	// Touch beets in ID order so two concurrent batches on PostgreSQL take
	// the row locks in the same order and cannot deadlock.
	ids := make([]int64, 0, len(latest))
	for id := range latest {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		live, err := touchBeets(ctx, tx, ids, latest)
		if err != nil {
			return err
		}
		return insertEvents(ctx, tx, events, live, db.d.insertChunk())
	})
	if err != nil {
		return fmt.Errorf("add events: %w", err)
	}
	return nil
}

// touchBeets moves last_event_at of each beet forward to latest[id] and
// returns the beets that exist. The UPDATE doubles as the existence check
// and, on PostgreSQL, locks the row against a concurrent delete.
func touchBeets(ctx context.Context, tx *sql.Tx, ids []int64, latest map[int64]int64) (map[int64]bool, error) {
	live := make(map[int64]bool, len(ids))
	for _, id := range ids {
		var got int64
		err := tx.QueryRowContext(ctx, `UPDATE beets SET last_event_at =
			CASE WHEN last_event_at IS NULL OR last_event_at < $1 THEN $1 ELSE last_event_at END
			WHERE id = $2 RETURNING id`, latest[id], id).Scan(&got)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return nil, fmt.Errorf("beet %d: %w", id, err)
		}
		live[id] = true
	}
	return live, nil
}

// insertEvents writes the events of live beets with multi-row INSERTs of
// chunk rows, preparing the full-chunk statement once per call.
func insertEvents(ctx context.Context, tx *sql.Tx, events []beet.Event, live map[int64]bool, chunk int) error {
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	args := make([]any, 0, 6*min(len(events), chunk))
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		var err error
		if len(args) == 6*chunk {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, insertEventsSQL(chunk)); err != nil {
					return err
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertEventsSQL(len(args)/6), args...)
		}
		args = args[:0]
		return err
	}
	for i := range events {
		e := &events[i]
		if !live[e.BeetID] {
			continue
		}
		args = append(args, e.ID[:], e.BeetID, toMicros(e.ReceivedAt), nullFloat(e.Value), e.Method, e.UserAgent)
		if len(args) == 6*chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// insertEventsSQL returns an INSERT of n rows that skips stored IDs.
func insertEventsSQL(n int) string {
	var b strings.Builder
	b.Grow(100 + n*30)
	b.WriteString(`INSERT INTO events (id, beet_id, received_at, value, method, user_agent) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range 6 {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i*6 + j + 1))
		}
		b.WriteByte(')')
	}
	b.WriteString(` ON CONFLICT (id) DO NOTHING`)
	return b.String()
}

// FindEvents returns a beet's events newest first. Since is inclusive and
// Until exclusive; Limit 0 means beet.DefaultPageLimit and larger limits are
// cut to beet.MaxPageLimit. An unknown beet has no events.
func (db *DB) FindEvents(ctx context.Context, f beet.EventFilter) ([]*beet.Event, error) {
	query := `SELECT id, beet_id, received_at, value, method, user_agent FROM events WHERE beet_id = $1`
	args := []any{f.BeetID}
	if f.Since != nil {
		args = append(args, toMicros(*f.Since))
		query += ` AND received_at >= $` + strconv.Itoa(len(args))
	}
	if f.Until != nil {
		args = append(args, toMicros(*f.Until))
		query += ` AND received_at < $` + strconv.Itoa(len(args))
	}
	args = append(args, pageLimit(f.Limit))
	query += ` ORDER BY received_at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find events: %w", err)
	}
	defer rows.Close()
	out := []*beet.Event{}
	for rows.Next() {
		var (
			e        beet.Event
			id       []byte
			received int64
			value    sql.NullFloat64
		)
		if err := rows.Scan(&id, &e.BeetID, &received, &value, &e.Method, &e.UserAgent); err != nil {
			return nil, fmt.Errorf("find events: %w", err)
		}
		if len(id) != len(e.ID) {
			return nil, fmt.Errorf("find events: event ID of %d bytes, want %d", len(id), len(e.ID))
		}
		copy(e.ID[:], id)
		e.ReceivedAt, e.Value = fromMicros(received), fromNullFloat(value)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find events: %w", err)
	}
	return out, nil
}

// BeetsWithEventsBefore returns, in ID order after afterID, up to limit IDs
// of beets of accounts on plan p that hold events older than cutoff. The
// EXISTS probe stops at the first old event on the (beet_id, received_at)
// index, so a beet with millions of events costs one index seek. Limit 0
// means beet.DefaultPageLimit.
func (db *DB) BeetsWithEventsBefore(ctx context.Context, p beet.Plan, cutoff time.Time, afterID int64, limit int) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT b.id FROM beets b JOIN accounts a ON a.id = b.account_id
		WHERE a.plan = $1 AND b.id > $2
		AND EXISTS (SELECT 1 FROM events e WHERE e.beet_id = b.id AND e.received_at < $3)
		ORDER BY b.id LIMIT $4`, string(p), afterID, toMicros(cutoff), pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("beets with events before: %w", err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("beets with events before: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("beets with events before: %w", err)
	}
	return out, nil
}

// DeleteEventsBefore deletes up to limit of the beet's oldest events older
// than cutoff in one short statement and returns how many it deleted. On
// PostgreSQL the rows are claimed with SKIP LOCKED, so several instances can
// clean up at once without waiting for each other or deleting twice. Limit
// 0 means beet.DefaultPageLimit; larger limits are cut to beet.MaxPageLimit.
func (db *DB) DeleteEventsBefore(ctx context.Context, beetID int64, cutoff time.Time, limit int) (int64, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM events WHERE id IN (
		SELECT id FROM events WHERE beet_id = $1 AND received_at < $2
		ORDER BY received_at LIMIT $3`+db.d.skipLocked()+`)`,
		beetID, toMicros(cutoff), pageLimit(limit)))
	if err != nil {
		return 0, fmt.Errorf("delete events before: %w", err)
	}
	return n, nil
}

// CountEventsBefore counts the beet's events older than cutoff.
func (db *DB) CountEventsBefore(ctx context.Context, beetID int64, cutoff time.Time) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE beet_id = $1 AND received_at < $2`,
		beetID, toMicros(cutoff)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count events before: %w", err)
	}
	return n, nil
}
