package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/beethq/beet"
)

// findDuePG is FindDueBeets on PostgreSQL, whose deadline index holds
// wake_at, a lower bound of due_at (migration 00016), so that ingestion
// moving a deadline later does not touch the index. It reads the woken
// beets (wake_at <= t) in index order, a page at a time, keeps those
// whose deadline has passed and moves the others' wake_at up to their
// deadline, until it has limit due beets or no woken beet is left. The
// due beets come back earliest deadline first.
func (db *DB) findDuePG(ctx context.Context, t time.Time, limit int) ([]*beet.Beet, error) {
	limit = pageLimit(limit)
	at := toMicros(t)
	var out []*beet.Beet
	afterWake, afterID := int64(math.MinInt64), int64(0)
	for len(out) < limit {
		rows, err := db.read.QueryContext(ctx, `SELECT `+beetColumns+`, wake_at FROM beets
			WHERE wake_at <= $1 AND (wake_at, id) > ($2, $3) ORDER BY wake_at, id LIMIT $4`, at, afterWake, afterID, limit)
		if err != nil {
			return nil, err
		}
		var early []int64
		n := 0
		for rows.Next() {
			b, err := scanBeet(rows, &afterWake)
			if err != nil {
				rows.Close()
				return nil, err
			}
			n, afterID = n+1, b.ID
			if b.DueAt != nil && !b.DueAt.After(t) {
				out = append(out, b)
			} else {
				early = append(early, b.ID)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(early) > 0 {
			// SKIP LOCKED: a beet that a commit holds keeps its early
			// wake until the next sweep, and the sweeper never waits on
			// ingestion (nor can the two deadlock).
			_, err := db.write.ExecContext(ctx, `UPDATE beets SET wake_at = due_at WHERE id IN (
				SELECT id FROM beets WHERE id = ANY($1::bigint[]) FOR UPDATE SKIP LOCKED)
				AND wake_at <= $2 AND due_at > $2`, early, at)
			if err != nil {
				return nil, err
			}
		}
		if n < limit {
			break
		}
	}
	slices.SortFunc(out, func(a, b *beet.Beet) int { return cmp.Or(a.DueAt.Compare(*b.DueAt), cmp.Compare(a.ID, b.ID)) })
	return out[:min(len(out), limit)], nil
}

// applyDuePG is ApplyDue on PostgreSQL in a fixed number of statements
// whatever the batch's size: every statement is a network round trip, and
// three a flip (its beet, the flip, its outbox rows) held a mass silence
// of 10,000 beets to a few hundred flips a second. The rows are locked in
// ID order first, as ingestion locks them, so the two cannot deadlock.
// Each change is still a compare-and-set on the beet's deadline (and
// status): one that lost its race is not applied.
func (db *DB) applyDuePG(ctx context.Context, changes []beet.DueChange) error {
	n := len(changes)
	ids, dues := make([]int64, n), make([]int64, n)
	for i, c := range changes {
		ids[i], dues[i] = c.BeetID, toMicros(c.Due)
	}
	applied := make([]bool, n)
	flips := make([]beet.Flip, n)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM beets WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, ids); err != nil {
			return err
		}
		var (
			mIdx                []int
			mIDs, mDue          []int64
			mNext               []*int64
			fIdx                []int
			fIDs, fDue, fAt     []int64
			fNext               []*int64
			fTo, fFrom, fReason []string
		)
		for i, c := range changes {
			if c.Flip == nil {
				mIdx = append(mIdx, i)
				mIDs, mDue, mNext = append(mIDs, c.BeetID), append(mDue, dues[i]), append(mNext, microsPtr(c.Next))
				continue
			}
			fl := *c.Flip
			fl.BeetID, fl.At = c.BeetID, stamp(fl.At)
			flips[i] = fl
			fIdx = append(fIdx, i)
			fIDs, fDue, fAt = append(fIDs, c.BeetID), append(fDue, dues[i]), append(fAt, toMicros(fl.At))
			fNext = append(fNext, microsPtr(c.Next))
			fTo, fFrom, fReason = append(fTo, string(fl.To)), append(fFrom, string(fl.From)), append(fReason, fl.Reason)
		}
		done := map[int64]bool{}
		collect := func(rows *sql.Rows, err error) error {
			got, err := scanIDs(rows, err)
			for _, id := range got {
				done[id] = true
			}
			return err
		}
		// wake_at (the index's key, see findDuePG) follows the deadline
		// set here, so the beet is not woken before it.
		if len(mIdx) > 0 {
			if err := collect(tx.QueryContext(ctx, `UPDATE beets SET due_at = v.next, wake_at = v.next
				FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS v(id, next, due)
				WHERE beets.id = v.id AND beets.due_at = v.due RETURNING beets.id`, mIDs, mNext, mDue)); err != nil {
				return err
			}
			for _, i := range mIdx {
				applied[i] = done[changes[i].BeetID]
			}
		}
		if len(fIdx) == 0 {
			return nil
		}
		clear(done)
		if err := collect(tx.QueryContext(ctx, `UPDATE beets SET status = v.to_status, status_reason = v.reason,
			status_since = v.at, due_at = v.next, wake_at = v.next
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[])
				AS v(id, to_status, reason, at, next, from_status, due)
			WHERE beets.id = v.id AND beets.status = v.from_status AND beets.due_at = v.due RETURNING beets.id`,
			fIDs, fTo, fReason, fAt, fNext, fFrom, fDue)); err != nil {
			return err
		}
		var won []*beet.Flip
		for _, i := range fIdx {
			if done[changes[i].BeetID] {
				applied[i] = true
				won = append(won, &flips[i])
			}
		}
		return insertFlipsPG(ctx, tx, won)
	})
	if err != nil {
		return fmt.Errorf("apply deadlines: %w", err)
	}
	reportDue(changes, applied, flips)
	return nil
}

// insertFlipsPG records flips of distinct beets and their outbox rows in
// three statements (see insertFlip and fanOut, which it mirrors), and sets
// each flip's ID.
func insertFlipsPG(ctx context.Context, tx *sql.Tx, flips []*beet.Flip) error {
	if len(flips) == 0 {
		return nil
	}
	n := len(flips)
	beetIDs, at := make([]int64, n), make([]int64, n)
	from, to, kind, reason := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	observed, expected := make([]*float64, n), make([]*float64, n)
	byBeet := make(map[int64]*beet.Flip, n)
	for i, f := range flips {
		beetIDs[i], at[i] = f.BeetID, toMicros(f.At)
		from[i], to[i], kind[i], reason[i] = string(f.From), string(f.To), string(f.Kind), f.Reason
		observed[i], expected[i] = f.Observed, f.Expected
		byBeet[f.BeetID] = f
	}
	rows, err := tx.QueryContext(ctx, `INSERT INTO flips (beet_id, at, from_status, to_status, kind, reason, observed, expected)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
			$7::double precision[], $8::double precision[])
		RETURNING id, beet_id`, beetIDs, at, from, to, kind, reason, observed, expected)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, beetID int64
		if err := rows.Scan(&id, &beetID); err != nil {
			rows.Close()
			return err
		}
		byBeet[beetID].ID = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// The outbox rows: fanOut's rules, with the incident of a flip out of
	// trouble looked up in the same statement.
	var oBeet, oFlip []int64
	var oEvent []string
	var oAt []int64
	var oLeaves []bool
	for _, f := range flips {
		event := beet.NotifyEvent(f)
		if event == "" && f.Kind == beet.FlipManual && f.To == beet.StatusPaused &&
			f.From.InTrouble() {
			event = beet.EventPaused
		}
		if event == "" {
			continue
		}
		oBeet, oFlip, oEvent, oAt = append(oBeet, f.BeetID), append(oFlip, f.ID), append(oEvent, event), append(oAt, toMicros(f.At))
		oLeaves = append(oLeaves, f.From.InTrouble())
	}
	if len(oBeet) == 0 {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO deliveries (channel_id, beet_id, flip_id, incident_flip_id, event, status, next_at, created_at)
		SELECT bc.channel_id, v.beet_id, v.flip_id,
			CASE WHEN v.leaves THEN COALESCE((SELECT MAX(f.id) FROM flips f WHERE f.beet_id = v.beet_id AND f.id < v.flip_id
				AND f.to_status IN `+troubleStatuses+` AND f.from_status NOT IN `+troubleStatuses+`), v.flip_id)
			ELSE v.flip_id END,
			v.event, 'pending', v.at, v.at
		FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::boolean[]) AS v(beet_id, flip_id, event, at, leaves)
		JOIN beet_channels bc ON bc.beet_id = v.beet_id`, oBeet, oFlip, oEvent, oAt, oLeaves)
	return err
}
