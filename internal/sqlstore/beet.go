package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
)

const beetColumns = `id, account_id, name, description, token, status, status_reason, status_since, timezone,
	detection, allow_bots, last_event_at, due_at, model, created_at, updated_at, runs, resume_on_event`

// deleteBatch bounds each event-deleting transaction of DeleteBeet, so the
// SQLite writer is never held for long by one beet's millions of events.
const deleteBatch = 5000

// CreateBeet inserts b and sets its ID. A taken token is ECONFLICT; an
// unknown account is ENOTFOUND. A zero CreatedAt becomes now, and a zero
// UpdatedAt becomes CreatedAt.
func (db *DB) CreateBeet(ctx context.Context, b *beet.Beet) error {
	nb, detection, err := newBeetRow(b)
	if err != nil {
		return fmt.Errorf("create beet: %w", err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error { return insertBeet(ctx, tx, &nb, detection) })
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("create beet: %w", tokenTaken())
	case db.d.isForeignKey(err):
		return fmt.Errorf("create beet: %w", beet.Errorf(beet.ENOTFOUND, "account %d not found", nb.AccountID))
	case err != nil:
		return fmt.Errorf("create beet: %w", err)
	}
	*b = nb
	return nil
}

// newBeetRow is b as it is inserted: stamped times, and its detection as
// JSON.
func newBeetRow(b *beet.Beet) (beet.Beet, []byte, error) {
	nb := *b
	nb.CreatedAt = stamp(nb.CreatedAt)
	if nb.UpdatedAt.IsZero() {
		nb.UpdatedAt = nb.CreatedAt
	}
	nb.UpdatedAt = stamp(nb.UpdatedAt)
	if nb.LastEventAt != nil {
		t := stamp(*nb.LastEventAt)
		nb.LastEventAt = &t
	}
	nb.StatusSince = nb.CreatedAt
	detection, err := json.Marshal(nb.Detection)
	return nb, detection, err
}

// insertBeet inserts nb, stamped, and sets its ID. A new beet notifies
// every channel of its account, from the start.
func insertBeet(ctx context.Context, tx *sql.Tx, nb *beet.Beet, detection []byte) error {
	err := tx.QueryRowContext(ctx, `INSERT INTO beets (account_id, name, description, token, status,
		status_reason, status_since, timezone, detection, allow_bots, last_event_at, created_at, updated_at, resume_on_event)
		VALUES ($1, $2, $3, $4, $5, $6, $11, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
		nb.AccountID, nb.Name, nb.Description, nb.Token, string(nb.Status), nb.StatusReason, nb.Timezone,
		string(detection), nb.AllowBots, nullMicros(nb.LastEventAt), toMicros(nb.CreatedAt), toMicros(nb.UpdatedAt),
		nb.ResumeOnEvent,
	).Scan(&nb.ID)
	if err != nil {
		return err
	}
	return attachAccountChannels(ctx, tx, nb.ID, nb.AccountID)
}

func tokenTaken() error {
	return &beet.Error{Code: beet.ECONFLICT, Field: "token", Message: "this token is already in use"}
}

// FindBeetByID returns the beet or an ENOTFOUND error.
func (db *DB) FindBeetByID(ctx context.Context, id int64) (*beet.Beet, error) {
	b, err := scanBeet(db.read.QueryRowContext(ctx, `SELECT `+beetColumns+` FROM beets WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find beet: %w", notFound(err, "beet %d not found", id))
	}
	return b, nil
}

// FindBeetByToken returns the beet with that ingestion token or an
// ENOTFOUND error. It is the ingestion hot path: one indexed read.
func (db *DB) FindBeetByToken(ctx context.Context, token string) (*beet.Beet, error) {
	stmt, err := db.prepared(ctx, db.read, `SELECT `+beetColumns+` FROM beets WHERE token = $1`)
	if err != nil {
		return nil, fmt.Errorf("find beet by token: %w", err)
	}
	b, err := scanBeet(stmt.QueryRowContext(ctx, token))
	if err != nil {
		// The token itself is a secret: keep it out of the message.
		return nil, fmt.Errorf("find beet by token: %w", notFound(err, "no beet has this token"))
	}
	return b, nil
}

// FindBeets returns one page of matching beets in creation (ID) order and
// the number of matching beets in all. Limit 0 means beet.DefaultPageLimit;
// larger limits are cut to beet.MaxPageLimit.
func (db *DB) FindBeets(ctx context.Context, f beet.BeetFilter) ([]*beet.Beet, int, error) {
	var (
		where []string
		args  []any
	)
	if f.AccountID != nil {
		args = append(args, *f.AccountID)
		where = append(where, "account_id = $"+strconv.Itoa(len(args)))
	}
	if f.Status != nil {
		args = append(args, string(*f.Status))
		where = append(where, "status = $"+strconv.Itoa(len(args)))
	}
	if name := strings.TrimSpace(f.Name); name != "" {
		// LIKE's wildcards in the name are matched literally.
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(name))
		args = append(args, "%"+esc+"%")
		where = append(where, db.d.lowerName()+" LIKE $"+strconv.Itoa(len(args))+` ESCAPE '\'`)
	}
	if f.Tag != "" {
		args = append(args, f.Tag)
		where = append(where, "EXISTS (SELECT 1 FROM beet_tags t WHERE t.beet_id = beets.id AND t.tag = $"+strconv.Itoa(len(args))+")")
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	offset := max(f.Offset, 0)
	// COUNT(*) OVER () gives the total with the page in one query; the
	// window is computed before LIMIT applies.
	query := `SELECT ` + beetColumns + `, COUNT(*) OVER () FROM beets` + cond +
		` ORDER BY ` + beetOrderSQL(f.Order, db.d.lowerName()) + ` LIMIT $` + strconv.Itoa(len(args)+1) + ` OFFSET $` + strconv.Itoa(len(args)+2)
	rows, err := db.read.QueryContext(ctx, query, append(args, pageLimit(f.Limit), offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("find beets: %w", err)
	}
	defer rows.Close()
	out := []*beet.Beet{}
	total := 0
	for rows.Next() {
		b, err := scanBeet(rows, &total)
		if err != nil {
			return nil, 0, fmt.Errorf("find beets: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("find beets: %w", err)
	}
	if len(out) == 0 && offset > 0 {
		// A page past the end has no rows to carry the total.
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM beets`+cond, args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("find beets: count: %w", err)
		}
	}
	return out, total, nil
}

// beetOrderSQL is the ORDER BY of a beet order, lowerName the engine's
// lower-cased name; every one ends with the ID so that pages never
// overlap. An unknown order is creation order.
func beetOrderSQL(o beet.BeetOrder, lowerName string) string {
	switch o {
	case beet.OrderName:
		return lowerName + ", id"
	case beet.OrderStatus:
		return `CASE status WHEN 'down' THEN 0 WHEN 'anomalous' THEN 1 WHEN 'learning' THEN 2 WHEN 'new' THEN 3
			WHEN 'up' THEN 4 ELSE 5 END, id`
	case beet.OrderLastEvent:
		// No event yet sorts first: it has been silent the longest.
		return "COALESCE(last_event_at, 0), id"
	case beet.OrderTag:
		// By the first tag; the untagged after every tagged beet.
		const first = "(SELECT MIN(t.tag) FROM beet_tags t WHERE t.beet_id = beets.id)"
		return first + " IS NULL, " + first + ", " + lowerName + ", id"
	}
	return "id"
}

// UpdateBeet applies the non-nil fields of upd, sets updated_at to at and
// returns the beet as stored. The caller validates upd. With
// upd.Redetect, the beet is read and locked first, and what Redetect
// decides is written with the update, its flips recorded with their
// outbox rows, in one transaction.
func (db *DB) UpdateBeet(ctx context.Context, id int64, upd beet.BeetUpdate, at time.Time) (*beet.Beet, error) {
	var (
		sets []string
		args []any
	)
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, col+" = $"+strconv.Itoa(len(args)))
	}
	if upd.Name != nil {
		set("name", *upd.Name)
	}
	if upd.Description != nil {
		set("description", *upd.Description)
	}
	if upd.Timezone != nil {
		set("timezone", *upd.Timezone)
	}
	if upd.Detection != nil {
		d, err := json.Marshal(*upd.Detection)
		if err != nil {
			return nil, fmt.Errorf("update beet: %w", err)
		}
		set("detection", string(d))
	}
	if upd.AllowBots != nil {
		set("allow_bots", *upd.AllowBots)
	}
	if upd.ResumeOnEvent != nil {
		set("resume_on_event", *upd.ResumeOnEvent)
	}
	set("updated_at", toMicros(stamp(at)))
	args = append(args, id)
	query := `UPDATE beets SET ` + strings.Join(sets, ", ") + ` WHERE id = $` + strconv.Itoa(len(args)) +
		` RETURNING ` + beetColumns
	if upd.Redetect == nil {
		b, err := scanBeet(db.write.QueryRowContext(ctx, query, args...))
		if err != nil {
			return nil, fmt.Errorf("update beet: %w", notFound(err, "beet %d not found", id))
		}
		return b, nil
	}
	var b *beet.Beet
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		was, err := scanBeet(tx.QueryRowContext(ctx, `SELECT `+beetColumns+` FROM beets WHERE id = $1`+db.d.forUpdate(), id))
		if err != nil {
			return notFound(err, "beet %d not found", id)
		}
		if b, err = scanBeet(tx.QueryRowContext(ctx, query, args...)); err != nil {
			return err
		}
		flips, err := upd.Redetect(*was, b)
		if err != nil {
			return err
		}
		b.StatusSince = stamp(b.StatusSince)
		if b.DueAt != nil {
			due := stamp(*b.DueAt)
			b.DueAt = &due
		}
		if _, err := tx.ExecContext(ctx, `UPDATE beets SET status = $1, status_reason = $2, status_since = $3, due_at = $4,
			model = $5 WHERE id = $6`, string(b.Status), b.StatusReason, toMicros(b.StatusSince), nilMicros(b.DueAt),
			nilBytes(b.Model), id); err != nil {
			return err
		}
		for i := range flips {
			f := flips[i]
			f.BeetID, f.At = id, stamp(f.At)
			if err := insertFlip(ctx, tx, &f); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update beet: %w", err)
	}
	return b, nil
}

// DeleteBeet removes the beet with its events, problems and flips. Events go
// first in bounded batches, each its own short transaction, so that other
// writers get the SQLite writer between batches; the beet row goes last and
// cascades to whatever arrived meanwhile.
func (db *DB) DeleteBeet(ctx context.Context, id int64) error {
	var one int
	if err := db.read.QueryRowContext(ctx, `SELECT 1 FROM beets WHERE id = $1`, id).Scan(&one); err != nil {
		return fmt.Errorf("delete beet: %w", notFound(err, "beet %d not found", id))
	}
	// By the whole key: PostgreSQL's events are partitioned on received_at.
	query := `DELETE FROM events WHERE (received_at, id) IN (SELECT received_at, id FROM events WHERE beet_id = $1 LIMIT $2` + db.d.skipLocked() + `)`
	for {
		n, err := rowsAffected(db.write.ExecContext(ctx, query, id, deleteBatch))
		if err != nil {
			return fmt.Errorf("delete beet: events: %w", err)
		}
		if n < deleteBatch {
			break
		}
	}
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM beets WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete beet: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete beet: %w", beet.Errorf(beet.ENOTFOUND, "beet %d not found", id))
	}
	return nil
}

// SetBeetToken replaces the token; the old one stops matching at once and
// is kept (hashed) for the grace window, so that hits with it can be shown
// on the beet. A token used by another beet is ECONFLICT.
func (db *DB) SetBeetToken(ctx context.Context, id int64, token string, at time.Time) error {
	at = stamp(at)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var old string
		if err := tx.QueryRowContext(ctx, `SELECT token FROM beets WHERE id = $1`+db.d.forUpdate(), id).Scan(&old); err != nil {
			return notFound(err, "beet %d not found", id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE beets SET token = $1, updated_at = $2 WHERE id = $3`,
			token, toMicros(at), id); err != nil {
			return err
		}
		if old == token {
			return nil
		}
		return keepRotatedToken(ctx, tx, id, old, at)
	})
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("set beet token: %w", tokenTaken())
	case err != nil:
		return fmt.Errorf("set beet token: %w", err)
	}
	return nil
}

// SetBeetStatus moves the beet from f.From to f.To and records f in one
// transaction, only if the beet is still in f.From (compare and set). It
// sets f.ID, and returns ECONFLICT if the status had changed meanwhile and
// ENOTFOUND if the beet is gone. A zero f.At becomes now.
func (db *DB) SetBeetStatus(ctx context.Context, f *beet.Flip) error {
	nf := *f
	nf.At = stamp(nf.At)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		n, err := rowsAffected(tx.ExecContext(ctx,
			`UPDATE beets SET status = $1, status_reason = $2, status_since = $3 WHERE id = $4 AND status = $5`,
			string(nf.To), nf.Reason, toMicros(nf.At), nf.BeetID, string(nf.From)))
		if err != nil {
			return err
		}
		if n == 0 {
			var cur string
			err := tx.QueryRowContext(ctx, `SELECT status FROM beets WHERE id = $1`, nf.BeetID).Scan(&cur)
			if err != nil {
				return notFound(err, "beet %d not found", nf.BeetID)
			}
			return beet.Errorf(beet.ECONFLICT, "beet %d is %s, not %s", nf.BeetID, cur, nf.From)
		}
		return insertFlip(ctx, tx, &nf)
	})
	if err != nil {
		return fmt.Errorf("set beet status: %w", err)
	}
	*f = nf
	return nil
}

// FindDueBeets returns up to limit beets whose deadline is at or before t,
// earliest first.
func (db *DB) FindDueBeets(ctx context.Context, t time.Time, limit int) ([]*beet.Beet, error) {
	out, err := db.d.findDue(ctx, db, t, limit)
	if err != nil {
		return nil, fmt.Errorf("find due beets: %w", err)
	}
	return out, nil
}

// findDueSQLite is FindDueBeets on SQLite, through the partial index on
// due_at (PostgreSQL's: findDuePG).
func (db *DB) findDueSQLite(ctx context.Context, t time.Time, limit int) ([]*beet.Beet, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+beetColumns+` FROM beets
		WHERE due_at IS NOT NULL AND due_at <= $1 ORDER BY due_at, id LIMIT $2`, toMicros(t), pageLimit(limit))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*beet.Beet
	for rows.Next() {
		b, err := scanBeet(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SetBeetDue sets the beet's deadline, or clears it when due is nil.
func (db *DB) SetBeetDue(ctx context.Context, id int64, due *time.Time) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE beets SET due_at = $1 WHERE id = $2`, nullMicros(due), id))
	if err != nil {
		return fmt.Errorf("set beet deadline: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("set beet deadline: %w", beet.Errorf(beet.ENOTFOUND, "beet %d not found", id))
	}
	return nil
}

// ApplyDue applies many passed deadlines' decisions in one transaction, so
// a sweep of thousands of due beets costs a few commits, not one each.
func (db *DB) ApplyDue(ctx context.Context, changes []beet.DueChange) error {
	if len(changes) == 0 {
		return nil
	}
	return db.d.applyDue(ctx, db, changes)
}

// applyDueSQLite is ApplyDue on SQLite, a prepared statement a change
// (PostgreSQL's: applyDuePG).
func (db *DB) applyDueSQLite(ctx context.Context, changes []beet.DueChange) error {
	move, err := db.prepared(ctx, db.write, `UPDATE beets SET due_at = $1 WHERE id = $2 AND due_at = $3`)
	if err != nil {
		return fmt.Errorf("apply deadlines: %w", err)
	}
	flip, err := db.prepared(ctx, db.write, `UPDATE beets SET status = $1, status_reason = $2, status_since = $3,
		due_at = $4 WHERE id = $5 AND status = $6 AND due_at = $7`)
	if err != nil {
		return fmt.Errorf("apply deadlines: %w", err)
	}
	applied := make([]bool, len(changes))
	flips := make([]beet.Flip, len(changes))
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		m, f := tx.StmtContext(ctx, move), tx.StmtContext(ctx, flip)
		for i, c := range changes {
			if c.Flip == nil {
				n, err := rowsAffected(m.ExecContext(ctx, nullMicros(c.Next), c.BeetID, toMicros(c.Due)))
				if err != nil {
					return err
				}
				applied[i] = n == 1
				continue
			}
			fl := *c.Flip
			fl.BeetID, fl.At = c.BeetID, stamp(fl.At)
			n, err := rowsAffected(f.ExecContext(ctx, string(fl.To), fl.Reason, toMicros(fl.At), nullMicros(c.Next),
				c.BeetID, string(fl.From), toMicros(c.Due)))
			if err != nil {
				return err
			}
			if n == 1 {
				if err := insertFlip(ctx, tx, &fl); err != nil {
					return err
				}
				applied[i], flips[i] = true, fl
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply deadlines: %w", err)
	}
	reportDue(changes, applied, flips)
	return nil
}

// reportDue tells each change whether it was applied and, for an applied
// flip, gives it the flip as recorded (with its ID).
func reportDue(changes []beet.DueChange, applied []bool, flips []beet.Flip) {
	for i := range changes {
		changes[i].Applied = applied[i]
		if applied[i] && changes[i].Flip != nil {
			*changes[i].Flip = flips[i]
		}
	}
}

// insertFlip records f and, in the same transaction, its outbox rows (one
// delivery per channel of the beet; see fanOut).
func insertFlip(ctx context.Context, q querier, f *beet.Flip) error {
	err := q.QueryRowContext(ctx, `INSERT INTO flips (beet_id, at, from_status, to_status, kind, reason, observed, expected)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		f.BeetID, toMicros(f.At), string(f.From), string(f.To), string(f.Kind), f.Reason,
		nullFloat(f.Observed), nullFloat(f.Expected)).Scan(&f.ID)
	if err != nil {
		return err
	}
	return fanOut(ctx, q, f)
}

// scanBeet reads the beetColumns, then any extra columns into extra.
func scanBeet(s scanner, extra ...any) (*beet.Beet, error) {
	var (
		b                beet.Beet
		status           string
		detection        string
		lastEvent, due   sql.NullInt64
		created, updated int64
		since            int64
		runs             string
	)
	dest := append([]any{&b.ID, &b.AccountID, &b.Name, &b.Description, &b.Token, &status, &b.StatusReason,
		&since, &b.Timezone, &detection, &b.AllowBots, &lastEvent, &due, &b.Model, &created, &updated, &runs, &b.ResumeOnEvent}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(detection), &b.Detection); err != nil {
		return nil, fmt.Errorf("beet %d: detection: %w", b.ID, err)
	}
	if err := decodeRuns(runs, &b.Runs); err != nil {
		return nil, fmt.Errorf("beet %d: runs: %w", b.ID, err)
	}
	b.Status = beet.Status(status)
	b.LastEventAt = fromNullMicros(lastEvent)
	b.DueAt = fromNullMicros(due)
	b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
	b.StatusSince = fromMicros(since)
	return &b, nil
}
