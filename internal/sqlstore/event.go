package sqlstore

import (
	"cmp"
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
// exist, or whose Token is no longer their beet's, are dropped: a beet
// deleted or rotated while its events waited in a buffer must not make the
// rest of the batch fail, and a rotated token records nothing.
func (db *DB) AddEvents(ctx context.Context, events []beet.Event) error {
	if len(events) == 0 {
		return nil
	}
	latest := make(map[source]int64)
	for i := range events {
		k := source{events[i].BeetID, events[i].Token}
		us := toMicros(events[i].ReceivedAt)
		if cur, ok := latest[k]; !ok || us > cur {
			latest[k] = us
		}
	}
	// Touch beets in ID order so two concurrent batches on PostgreSQL take
	// the row locks in the same order and cannot deadlock.
	keys := make([]source, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b source) int {
		if c := cmp.Compare(a.beetID, b.beetID); c != 0 {
			return c
		}
		return strings.Compare(a.token, b.token)
	})
	w, err := db.eventWriteStmts(ctx)
	if err != nil {
		return fmt.Errorf("add events: %w", err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		live, err := db.touchBeets(ctx, tx, w.touch, keys, latest)
		if err != nil {
			return err
		}
		return insertEvents(ctx, tx, w.insert, events, live, db.d.insertChunk())
	})
	if err != nil {
		return fmt.Errorf("add events: %w", err)
	}
	return nil
}

// source is where a group of events came from: a beet and the token they
// arrived with ("" when the writer did not say).
type source struct {
	beetID int64
	token  string
}

// touchBeets moves last_event_at of each source's beet forward to its
// latest event and returns the sources whose beet exists and still has the
// token. The UPDATE doubles as that check and, on PostgreSQL, locks the row
// against a concurrent delete or rotation.
func (db *DB) touchBeets(ctx context.Context, tx *sql.Tx, touch *sql.Stmt, keys []source, latest map[source]int64) (map[source]bool, error) {
	if db.d.name() == "postgres" {
		return touchBeetsPostgres(ctx, tx, keys, latest)
	}
	stmt := tx.StmtContext(ctx, touch)
	live := make(map[source]bool, len(keys))
	for _, k := range keys {
		var got int64
		err := stmt.QueryRowContext(ctx, latest[k], k.beetID, k.token).Scan(&got)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return nil, fmt.Errorf("beet %d: %w", k.beetID, err)
		}
		live[k] = true
	}
	return live, nil
}

// touchBeetsPostgres does touchBeets in one statement: on PostgreSQL each
// statement is a network round trip, and a group of events may touch
// hundreds of beets. The rows are locked in ID order first, so two
// instances' groups cannot deadlock.
func touchBeetsPostgres(ctx context.Context, tx *sql.Tx, keys []source, latest map[source]int64) (map[source]bool, error) {
	ids, tokens, ts := make([]int64, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		ids[i], tokens[i], ts[i] = k.beetID, k.token, latest[k]
	}
	rows, err := tx.QueryContext(ctx, `
		WITH v AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS v(id, tok, ts)),
		     locked AS (SELECT b.id, b.token FROM beets b WHERE b.id = ANY($1::bigint[]) ORDER BY b.id FOR UPDATE),
		     ok AS (SELECT v.id, v.tok, v.ts FROM v JOIN locked l ON l.id = v.id AND (v.tok = '' OR v.tok = l.token)),
		     latest AS (SELECT id, max(ts) AS ts FROM ok GROUP BY id),
		     upd AS (UPDATE beets SET last_event_at = GREATEST(COALESCE(beets.last_event_at, latest.ts), latest.ts)
		             FROM latest WHERE beets.id = latest.id)
		SELECT id, tok FROM ok`, ids, tokens, ts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	live := make(map[source]bool, len(keys))
	for rows.Next() {
		var k source
		if err := rows.Scan(&k.beetID, &k.token); err != nil {
			return nil, err
		}
		live[k] = true
	}
	return live, rows.Err()
}

// eventWrites are AddEvents' prepared statements.
type eventWrites struct {
	touch  *sql.Stmt // one beet's last_event_at (SQLite)
	insert *sql.Stmt // a full chunk of events
}

const touchBeetSQL = `UPDATE beets SET last_event_at =
	CASE WHEN last_event_at IS NULL OR last_event_at < $1 THEN $1 ELSE last_event_at END
	WHERE id = $2 AND ($3 = '' OR token = $3) RETURNING id`

func (db *DB) eventWriteStmts(ctx context.Context) (eventWrites, error) {
	var w eventWrites
	var err error
	if w.touch, err = db.prepared(ctx, db.write, touchBeetSQL); err != nil {
		return w, err
	}
	w.insert, err = db.prepared(ctx, db.write, insertEventsSQL(db.d.insertChunk()))
	return w, err
}

// insertEvents writes the events of live sources with multi-row INSERTs of
// chunk rows; insert is the prepared full-chunk statement.
func insertEvents(ctx context.Context, tx *sql.Tx, insert *sql.Stmt, events []beet.Event, live map[source]bool, chunk int) error {
	full := tx.StmtContext(ctx, insert)
	args := make([]any, 0, 6*min(len(events), chunk))
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		var err error
		if len(args) == 6*chunk {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertEventsSQL(len(args)/6), args...)
		}
		args = args[:0]
		return err
	}
	for i := range events {
		e := &events[i]
		if !live[source{e.BeetID, e.Token}] {
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
