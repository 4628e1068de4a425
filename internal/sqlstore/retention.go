package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/beethq/beet"
)

// DeleteExpiredEvents deletes, in one short transaction, the events of
// accounts on plan p older than cutoff within the next slice of time from
// the plan's mark: the slice holds at most about limit events of any plan,
// found through the time index (PostgreSQL's primary key, SQLite's
// events_received_at), and the mark moves to its end in the same
// transaction. A pass therefore reads the events that expired since the
// last one, not every beet. done is true once the mark reaches cutoff.
//
// On PostgreSQL one instance at a time works on a plan (a transaction
// advisory lock); another instance calling meanwhile gets (0, true): the
// first one is on it. Limit 0 means beet.DefaultPageLimit.
func (db *DB) DeleteExpiredEvents(ctx context.Context, p beet.Plan, cutoff time.Time, limit int) (deleted int64, done bool, err error) {
	if limit <= 0 {
		limit = beet.DefaultPageLimit
	}
	hi := toMicros(cutoff)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		locked, err := db.d.tryLock(ctx, tx, retentionLock, string(p))
		if err != nil {
			return err
		}
		if !locked {
			done = true
			return nil
		}
		lo, err := retentionMark(ctx, tx, p)
		if err != nil {
			return err
		}
		if lo >= hi {
			done = true
			// Records the first pass's mark, so the next one need not
			// look for it again.
			return setRetentionMark(ctx, tx, p, hi)
		}
		// The slice ends after the limit-th event from the mark, with all
		// events of that same instant, or at the cutoff.
		end := hi
		var nth int64
		err = tx.QueryRowContext(ctx, `SELECT received_at FROM events WHERE received_at >= $1 AND received_at < $2
			ORDER BY received_at LIMIT 1 OFFSET $3`, lo, hi, limit-1).Scan(&nth)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			done = true
		case err != nil:
			return err
		case nth+1 < hi:
			end = nth + 1
		default:
			done = true
		}
		deleted, err = db.deleteSliceOfPlan(ctx, tx, p, lo, end)
		if err != nil {
			return err
		}
		return setRetentionMark(ctx, tx, p, end)
	})
	if err != nil {
		return 0, false, fmt.Errorf("delete expired events: %w", err)
	}
	return deleted, done, nil
}

// retentionLock names plan $1's clean-up lock (PostgreSQL). A slice of
// DeleteExpiredEvents holds it from reading the plan's mark to moving it,
// and lowerRetentionMark waits for it: a mark lowered between the two would
// be moved forward again, past the events it was lowered to.
const retentionLock = `'beet retention ' || current_database() || '.' || current_schema() || '.' || $1`

// deleteSliceOfPlan deletes the events of plan p's accounts received in
// [lo, end), a slice of a bounded number of events. It goes from the
// slice's events to their beets, never from the plan's beets to their
// events: a plan may have a million beets, of which a slice touches a few.
// (One statement with a join left the choice to the planner, which on
// fresh statistics read every beet of the plan.)
func (db *DB) deleteSliceOfPlan(ctx context.Context, tx *sql.Tx, p beet.Plan, lo, end int64) (int64, error) {
	beetIDs, err := scanIDs(tx.QueryContext(ctx, `SELECT DISTINCT beet_id FROM events WHERE received_at >= $1 AND received_at < $2`, lo, end))
	if err != nil {
		return 0, err
	}
	var deleted int64
	for len(beetIDs) > 0 {
		chunk := beetIDs[:min(len(beetIDs), 500)]
		beetIDs = beetIDs[len(chunk):]
		inChunk, args := db.d.idIn("b.id", chunk, 2)
		ofPlan, err := scanIDs(tx.QueryContext(ctx, `SELECT b.id FROM beets b JOIN accounts a ON a.id = b.account_id
			WHERE a.plan = $1 AND `+inChunk, append([]any{string(p)}, args...)...))
		if err != nil {
			return deleted, err
		}
		if len(ofPlan) == 0 {
			continue
		}
		ofBeets, args := db.d.idIn("beet_id", ofPlan, 3)
		n, err := rowsAffected(tx.ExecContext(ctx, `DELETE FROM events WHERE received_at >= $1 AND received_at < $2
			AND `+ofBeets, append([]any{lo, end}, args...)...))
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// CountExpiredEvents counts what DeleteExpiredEvents would delete for plan
// p up to cutoff: the plan's accounts' events from its mark to cutoff.
func (db *DB) CountExpiredEvents(ctx context.Context, p beet.Plan, cutoff time.Time) (int64, error) {
	lo, err := retentionMark(ctx, db.read, p)
	if err != nil {
		return 0, fmt.Errorf("count expired events: %w", err)
	}
	var n int64
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM events e JOIN beets b ON b.id = e.beet_id
		JOIN accounts a ON a.id = b.account_id
		WHERE e.received_at >= $1 AND e.received_at < $2 AND a.plan = $3`, lo, toMicros(cutoff), string(p)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count expired events: %w", err)
	}
	return n, nil
}

// retentionMark is the instant before which plan p's events are all
// deleted. A plan without a mark yet (the first pass after the upgrade
// that added them) starts at its accounts' oldest event, found with one
// index probe a beet, once, rather than scanning every older event.
func retentionMark(ctx context.Context, q querier, p beet.Plan) (int64, error) {
	var mark int64
	err := q.QueryRowContext(ctx, `SELECT done_before FROM retention_marks WHERE plan = $1`, string(p)).Scan(&mark)
	if !errors.Is(err, sql.ErrNoRows) {
		return mark, err
	}
	var oldest sql.NullInt64
	err = q.QueryRowContext(ctx, `SELECT MIN((SELECT MIN(e.received_at) FROM events e WHERE e.beet_id = b.id))
		FROM beets b JOIN accounts a ON a.id = b.account_id WHERE a.plan = $1`, string(p)).Scan(&oldest)
	if err != nil || !oldest.Valid {
		return math.MinInt64, err
	}
	return oldest.Int64, nil
}

// setRetentionMark moves plan p's mark forward to at, never back.
func setRetentionMark(ctx context.Context, tx *sql.Tx, p beet.Plan, at int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO retention_marks (plan, done_before) VALUES ($1, $2)
		ON CONFLICT (plan) DO UPDATE SET done_before = excluded.done_before
		WHERE excluded.done_before > retention_marks.done_before`, string(p), at)
	return err
}

// lowerRetentionMark moves plan p's mark back to the account's oldest
// event, in the transaction that puts the account on p: its events older
// than the mark were kept by its former plan, and the clean-up of p must
// see them again. It waits for p's clean-up lock (retentionLock), so a
// slice of p's clean-up under way ends first, and the next one reads the
// lowered mark and sees the account on p.
func (db *DB) lowerRetentionMark(ctx context.Context, tx *sql.Tx, p beet.Plan, accountID int64) error {
	if err := db.d.lock(ctx, tx, retentionLock, string(p)); err != nil {
		return err
	}
	var oldest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MIN((SELECT MIN(e.received_at) FROM events e WHERE e.beet_id = b.id))
		FROM beets b WHERE b.account_id = $1`, accountID).Scan(&oldest); err != nil {
		return err
	}
	if !oldest.Valid {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE retention_marks SET done_before = $1 WHERE plan = $2 AND done_before > $1`,
		oldest.Int64, string(p))
	return err
}

// DropEventsBefore removes the events older than cutoff by whole
// partitions: on PostgreSQL it drops each monthly partition that ends at or
// before cutoff (a catalog change, no row is deleted one by one), and
// returns how many it dropped. SQLite has one table and drops nothing.
func (db *DB) DropEventsBefore(ctx context.Context, cutoff time.Time) (int, error) {
	if !db.d.partitionsEvents() {
		return 0, nil
	}
	parts, err := db.EventPartitions(ctx)
	if err != nil {
		return 0, fmt.Errorf("drop events before: %w", err)
	}
	dropped := 0
	for _, part := range parts {
		if part.End.After(cutoff) {
			break
		}
		// A short lock timeout: DROP locks the parent table, and waiting
		// behind a long query would stall ingestion behind it.
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+quoteIdent(part.Name))
			return err
		})
		if err != nil {
			return dropped, fmt.Errorf("drop events before: %s: %w", part.Name, err)
		}
		db.log.Info("events partition dropped", "partition", part.Name, "end", part.End)
		dropped++
	}
	return dropped, nil
}

// EventPartition is one monthly partition of events on PostgreSQL.
type EventPartition struct {
	Name       string
	Start, End time.Time // End exclusive
}

var partitionName = regexp.MustCompile(`^events_([0-9]{4,})([0-9]{2})$`)

// EventPartitions lists the monthly partitions of events on PostgreSQL,
// oldest first.
func (db *DB) EventPartitions(ctx context.Context) ([]EventPartition, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass(format('%I.events', current_schema()))`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EventPartition
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		m := partitionName.FindStringSubmatch(name)
		if m == nil {
			continue // events_default, or one an operator added
		}
		y, _ := strconv.Atoi(m[1])
		mon, _ := strconv.Atoi(m[2])
		start := time.Date(y, time.Month(mon), 1, 0, 0, 0, 0, time.UTC)
		out = append(out, EventPartition{Name: name, Start: start, End: start.AddDate(0, 1, 0)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b EventPartition) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// PartitionState is what the partition job reports: the monthly
// partitions, how far ahead of now they reach without a gap, and the rows
// waiting in the default partition.
type PartitionState struct {
	Partitions int
	// Until is the end of the run of partitions that covers now; zero
	// when no partition covers now (inserts go to the default partition).
	Until time.Time
	// DefaultRows counts rows in events_default, up to maxDefaultCount.
	DefaultRows int64
}

// maxDefaultCount bounds the count of the default partition's rows: past
// it the number only says "many".
const maxDefaultCount = 100000

// adoptMonths bounds how many months of the default partition's rows one
// EnsureEventPartitions call moves into partitions of their own.
const adoptMonths = 12

// EnsureEventPartitions creates the monthly partitions of events from now's
// month to ahead months later, and a partition for each month (up to
// adoptMonths a call) whose rows sit in the default partition (a replay of
// old events, or a month the job missed), moving the rows into it. It is
// safe on many instances: one at a time runs it (a transaction advisory
// lock) and another returns the state without waiting. SQLite has no
// partitions and returns a zero state.
func (db *DB) EnsureEventPartitions(ctx context.Context, now time.Time, ahead int) (PartitionState, error) {
	if !db.d.partitionsEvents() {
		return PartitionState{}, nil
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var locked bool
		if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended(
			'beet partitions ' || current_database() || '.' || current_schema(), 0))`).Scan(&locked); err != nil {
			return err
		}
		if !locked {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
			return err
		}
		month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		for k := 0; k <= ahead; k++ {
			if err := createPartition(ctx, tx, month.AddDate(0, k, 0)); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT date_trunc('month', to_timestamp(received_at / 1000000.0) AT TIME ZONE 'UTC') AS m
			FROM events_default ORDER BY m LIMIT $1`, adoptMonths)
		if err != nil {
			return err
		}
		var months []time.Time
		for rows.Next() {
			var m time.Time
			if err := rows.Scan(&m); err != nil {
				rows.Close()
				return err
			}
			months = append(months, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, m := range months {
			if err := createPartition(ctx, tx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return PartitionState{}, fmt.Errorf("ensure event partitions: %w", err)
	}
	return db.EventPartitionState(ctx, now)
}

func createPartition(ctx context.Context, tx *sql.Tx, month time.Time) error {
	var created bool
	// A timestamp without time zone: the function takes the month in UTC.
	if err := tx.QueryRowContext(ctx, `SELECT beet_events_partition($1::timestamp)`,
		month.UTC().Format("2006-01-02 15:04:05")).Scan(&created); err != nil {
		return fmt.Errorf("partition for %s: %w", month.Format("2006-01"), err)
	}
	return nil
}

// EventPartitionState reads the partitions' state as of now (zero on
// SQLite).
func (db *DB) EventPartitionState(ctx context.Context, now time.Time) (PartitionState, error) {
	var st PartitionState
	if !db.d.partitionsEvents() {
		return st, nil
	}
	parts, err := db.EventPartitions(ctx)
	if err != nil {
		return st, fmt.Errorf("event partition state: %w", err)
	}
	st.Partitions = len(parts)
	for _, p := range parts {
		switch {
		case st.Until.IsZero() && !p.Start.After(now) && p.End.After(now):
			st.Until = p.End
		case !st.Until.IsZero() && p.Start.Equal(st.Until):
			st.Until = p.End
		}
	}
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM events_default LIMIT $1) AS d`,
		maxDefaultCount).Scan(&st.DefaultRows)
	if err != nil {
		return st, fmt.Errorf("event partition state: %w", err)
	}
	return st, nil
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
