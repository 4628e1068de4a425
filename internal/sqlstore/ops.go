package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// OpsStats is the state of the queues an operator watches: the beets by
// status, the passed deadlines the sweeper has not handled yet, and the
// outbox's pending deliveries. It feeds the metrics, read every few
// seconds at most, never on a request's path.
type OpsStats struct {
	Beets map[string]int64 // by status
	// Due counts the beets whose deadline is at or before now; OldestDue
	// is the earliest of those deadlines (zero when none): the sweep lag.
	Due       int64
	OldestDue time.Time
	// Pending counts deliveries waiting to be sent (due or not);
	// OldestPending is the earliest next_at of the due ones a worker could
	// claim, i.e. not held behind an earlier pending message of their
	// channel and beet (zero when none): how late the outbox runs.
	Pending       int64
	OldestPending time.Time
	// Partitions is the state of the events partitions (PostgreSQL; nil
	// on SQLite).
	Partitions *PartitionState
}

// OpsStats reads the counts as of now. The due count uses the partial
// index on due_at (wake_at on PostgreSQL); the others scan small tables (beets by status) or the
// pending part of the outbox.
func (db *DB) OpsStats(ctx context.Context, now time.Time) (*OpsStats, error) {
	st := &OpsStats{Beets: map[string]int64{}}
	rows, err := db.read.QueryContext(ctx, `SELECT status, COUNT(*) FROM beets GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("ops stats: %w", err)
	}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ops stats: %w", err)
		}
		st.Beets[status] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ops stats: %w", err)
	}
	var oldest sql.NullInt64
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*), MIN(due_at) FROM beets
		WHERE due_at IS NOT NULL AND due_at <= $1`+db.d.dueIndexed(), toMicros(now)).Scan(&st.Due, &oldest)
	if err != nil {
		return nil, fmt.Errorf("ops stats: %w", err)
	}
	if oldest.Valid {
		st.OldestDue = fromMicros(oldest.Int64)
	}
	var oldestPending sql.NullInt64
	// The lag counts only what a worker could claim now: a delivery held
	// behind an earlier pending one of its (channel, beet), which a
	// customer's receiver keeps refusing, is not late (ClaimDeliveries).
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*), MIN(CASE WHEN next_at <= $1 AND NOT EXISTS (SELECT 1 FROM deliveries e
			WHERE e.channel_id = d.channel_id AND e.beet_id = d.beet_id AND e.status = 'pending' AND e.id < d.id) THEN next_at END)
		FROM deliveries d WHERE status = 'pending'`, toMicros(now)).Scan(&st.Pending, &oldestPending)
	if err != nil {
		return nil, fmt.Errorf("ops stats: %w", err)
	}
	if oldestPending.Valid {
		st.OldestPending = fromMicros(oldestPending.Int64)
	}
	if db.d.partitionsEvents() {
		ps, err := db.EventPartitionState(ctx, now)
		if err != nil {
			return nil, fmt.Errorf("ops stats: %w", err)
		}
		st.Partitions = &ps
	}
	return st, nil
}

// PoolStats reports the connection pools: "write" and "read" on SQLite,
// "main" and "ingest" (AddEvents' own, openPGIngest) on PostgreSQL.
func (db *DB) PoolStats() map[string]sql.DBStats {
	if db.read == db.write {
		return map[string]sql.DBStats{"main": db.write.Stats(), "ingest": db.ingest.Stats()}
	}
	return map[string]sql.DBStats{"write": db.write.Stats(), "read": db.read.Stats()}
}
