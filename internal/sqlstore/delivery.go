package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/beethq/beet"
)

// troubleStatuses is beet.TroubleStatuses as an SQL list (checked by
// TestTroubleStatusesSQL): a constant, so queries stay constant strings.
const troubleStatuses = "('down', 'anomalous')"

const deliveryColumns = `id, channel_id, beet_id, flip_id, incident_flip_id, event, reminder, flapping, status,
	attempts, next_at, created_at, first_at, last_at, latency_us, error`

// notifiedFlip is the SQL condition for flips that send messages. It is
// built from beet.NotifyEvent itself, so the flapping count cannot drift
// from what is sent: the silent kinds, and every (from, to) pair of
// statuses that sends a message under any other kind (NotifyEvent looks at
// the kind only through SilentFlipKinds).
var notifiedFlip = func() string {
	var kinds, pairs []string
	for _, k := range beet.SilentFlipKinds {
		kinds = append(kinds, "'"+string(k)+"'")
	}
	for _, from := range beet.Statuses {
		for _, to := range beet.Statuses {
			if beet.NotifyEvent(&beet.Flip{From: from, To: to, Kind: beet.FlipSilence}) != "" {
				pairs = append(pairs, "'"+string(from)+">"+string(to)+"'")
			}
		}
	}
	return "kind NOT IN (" + strings.Join(kinds, ", ") + ") AND from_status || '>' || to_status IN (" + strings.Join(pairs, ", ") + ")"
}()

// fanOut writes the outbox rows of a flip: one pending delivery per
// channel of the beet, in the caller's transaction, so a flip and its
// messages commit together or not at all. Flips that send nothing write
// nothing. A flip that leaves trouble, or moves between down and
// anomalous, belongs to the incident the last flip into trouble opened.
// Pausing a beet that is down or anomalous ends its incident too: it
// writes a beet.paused message (PagerDuty resolves, the others are told
// alerts are off until it is resumed); other pauses and resumes send
// nothing.
func fanOut(ctx context.Context, q querier, f *beet.Flip) error {
	event := beet.NotifyEvent(f)
	if event == "" && f.Kind == beet.FlipManual && f.To == beet.StatusPaused &&
		f.From.InTrouble() {
		event = beet.EventPaused
	}
	if event == "" {
		return nil
	}
	incident := f.ID
	if f.From.InTrouble() {
		var open sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT MAX(id) FROM flips WHERE beet_id = $1 AND id < $2
			AND to_status IN `+troubleStatuses+` AND from_status NOT IN `+troubleStatuses+``, f.BeetID, f.ID).Scan(&open)
		if err != nil {
			return fmt.Errorf("fan out flip: %w", err)
		}
		if open.Valid {
			incident = open.Int64
		}
	}
	_, err := q.ExecContext(ctx, `INSERT INTO deliveries (channel_id, beet_id, flip_id, incident_flip_id, event, status, next_at, created_at)
		SELECT channel_id, $1, $2, $3, $4, 'pending', $5, $5 FROM beet_channels WHERE beet_id = $1`,
		f.BeetID, f.ID, incident, event, toMicros(f.At))
	if err != nil {
		return fmt.Errorf("fan out flip: %w", err)
	}
	return nil
}

// CreateDelivery inserts a delivery no flip made, such as a test message.
func (db *DB) CreateDelivery(ctx context.Context, d *beet.Delivery) error {
	nd := *d
	nd.CreatedAt = stamp(nd.CreatedAt)
	if nd.NextAt.IsZero() {
		nd.NextAt = nd.CreatedAt
	}
	nd.NextAt = stamp(nd.NextAt)
	if nd.Status == "" {
		nd.Status = beet.DeliveryPending
	}
	err := db.write.QueryRowContext(ctx, `INSERT INTO deliveries (channel_id, beet_id, flip_id, incident_flip_id, event, status, next_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		nd.ChannelID, nullID(nd.BeetID), nullID(nd.FlipID), nullID(nd.IncidentFlipID), nd.Event, string(nd.Status),
		toMicros(nd.NextAt), toMicros(nd.CreatedAt)).Scan(&nd.ID)
	if db.d.isForeignKey(err) {
		return fmt.Errorf("create delivery: %w", beet.Errorf(beet.ENOTFOUND, "channel %d not found", nd.ChannelID))
	} else if err != nil {
		return fmt.Errorf("create delivery: %w", err)
	}
	*d = nd
	return nil
}

// ClaimDeliveries takes due pending deliveries with one compare and set:
// the UPDATE counts the attempt and pushes next_at past the lease, so the
// rows are no longer due for anyone else. On PostgreSQL SKIP LOCKED lets
// concurrent workers take disjoint rows instead of waiting on each other;
// a row another worker claimed meanwhile fails the re-checked next_at
// condition and is skipped. SQLite has one writer and needs neither.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*beet.Delivery, error) {
	// The CTE runs once (PostgreSQL may run an IN subquery with LIMIT
	// more than once, claiming more rows than asked).
	//
	// Messages about one beet on one channel go out in order: a delivery
	// waits while an earlier one of the same pair is pending, so a
	// recovery never overtakes its alert (a PagerDuty resolve before its
	// trigger would leave the incident open for good).
	rows, err := db.write.QueryContext(ctx, `WITH due AS (SELECT id AS due_id FROM deliveries d
			WHERE status = 'pending' AND next_at <= $2
			AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.channel_id = d.channel_id AND e.beet_id = d.beet_id
				AND e.status = 'pending' AND e.id < d.id)
			ORDER BY next_at, id LIMIT $3`+db.d.skipLocked()+`)
		UPDATE deliveries SET attempts = attempts + 1, next_at = $1, first_at = COALESCE(first_at, $2) FROM due
		WHERE id = due_id AND status = 'pending' AND next_at <= $2
		RETURNING `+deliveryColumns, toMicros(now.Add(lease)), toMicros(now), pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	defer rows.Close()
	var out []*beet.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("claim deliveries: %w", err)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *beet.Delivery) int { return cmp.Compare(a.ID, b.ID) })
	return out, rows.Err()
}

// ClaimDelivery claims one pending delivery by ID, whenever it is due.
func (db *DB) ClaimDelivery(ctx context.Context, id int64, now time.Time, lease time.Duration) (*beet.Delivery, error) {
	d, err := scanDelivery(db.write.QueryRowContext(ctx, `UPDATE deliveries SET attempts = attempts + 1, next_at = $1,
		first_at = COALESCE(first_at, $3) WHERE id = $2 AND status = 'pending' AND next_at <= $3 RETURNING `+deliveryColumns,
		toMicros(now.Add(lease)), id, toMicros(now)))
	if err != nil {
		return nil, fmt.Errorf("claim delivery: %w", notFoundAs(err, beet.ECONFLICT, "delivery %d is not waiting to be sent", id))
	}
	return d, nil
}

// RecordDelivery stores an attempt's outcome if the delivery is still on
// that attempt (a worker whose lease ran out and was overtaken records
// nothing), and marks or clears the channel's failing state with it.
func (db *DB) RecordDelivery(ctx context.Context, r beet.DeliveryResult) (bool, error) {
	at := stamp(r.At)
	next := r.NextAt
	if next.IsZero() {
		next = at
	}
	var done bool
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var channel int64
		err := tx.QueryRowContext(ctx, `UPDATE deliveries SET status = $1, next_at = $2, last_at = $3, latency_us = $4, error = $5
			WHERE id = $6 AND attempts = $7 AND status = 'pending' RETURNING channel_id`,
			string(r.Status), toMicros(stamp(next)), toMicros(at), r.Latency.Microseconds(), cut(r.Error, 1000), r.ID, r.Attempts).Scan(&channel)
		if err == sql.ErrNoRows {
			return nil
		} else if err != nil {
			return err
		}
		done = true
		switch {
		case r.ChannelFailing:
			_, err = tx.ExecContext(ctx, `UPDATE channels SET failing_since = COALESCE(failing_since, $1), failing_reason = $2 WHERE id = $3`,
				toMicros(at), cut(r.Error, 1000), channel)
		case r.Status == beet.DeliveryDelivered:
			_, err = tx.ExecContext(ctx, `UPDATE channels SET failing_since = NULL, failing_reason = '' WHERE id = $1 AND failing_since IS NOT NULL`, channel)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record delivery: %w", err)
	}
	return done, nil
}

// FindDeliveryByID returns the delivery or ENOTFOUND.
func (db *DB) FindDeliveryByID(ctx context.Context, id int64) (*beet.Delivery, error) {
	d, err := scanDelivery(db.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find delivery: %w", notFound(err, "delivery %d not found", id))
	}
	return d, nil
}

// FindDeliveries returns the channel's deliveries, newest first.
func (db *DB) FindDeliveries(ctx context.Context, channelID int64, limit int) ([]*beet.Delivery, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE channel_id = $1
		ORDER BY id DESC LIMIT $2`, channelID, pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find deliveries: %w", err)
	}
	defer rows.Close()
	out := []*beet.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("find deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// FindFlipByID returns the flip or ENOTFOUND.
func (db *DB) FindFlipByID(ctx context.Context, id int64) (*beet.Flip, error) {
	var (
		f                  beet.Flip
		at                 int64
		from, to, kind     string
		observed, expected sql.NullFloat64
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, beet_id, at, from_status, to_status, kind, reason, observed, expected
		FROM flips WHERE id = $1`, id).Scan(&f.ID, &f.BeetID, &at, &from, &to, &kind, &f.Reason, &observed, &expected)
	if err != nil {
		return nil, fmt.Errorf("find flip: %w", notFound(err, "flip %d not found", id))
	}
	f.At, f.From, f.To, f.Kind = fromMicros(at), beet.Status(from), beet.Status(to), beet.FlipKind(kind)
	f.Observed, f.Expected = fromNullFloat(observed), fromNullFloat(expected)
	return &f, nil
}

// CountNotifiedFlips counts the beet's flips in [since, until] that send
// messages.
func (db *DB) CountNotifiedFlips(ctx context.Context, beetID int64, since, until time.Time) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM flips WHERE beet_id = $1 AND at >= $2 AND at <= $3 AND `+notifiedFlip,
		beetID, toMicros(since), toMicros(until)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count flips: %w", err)
	}
	return n, nil
}

// MarkFlapping flags delivery id as its beet's flapping notice on its
// channel, in one statement, unless one created since then exists.
func (db *DB) MarkFlapping(ctx context.Context, id int64, since time.Time) (bool, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE deliveries SET flapping = TRUE WHERE id = $1
		AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.channel_id = deliveries.channel_id
			AND o.beet_id = deliveries.beet_id AND o.flapping AND o.created_at >= $2 AND o.id <> $1)`, id, toMicros(since)))
	if err != nil {
		return false, fmt.Errorf("mark flapping: %w", err)
	}
	return n == 1, nil
}

// CreateReminders adds the next reminder for every (channel, beet) whose
// latest message is an alert (or a settled message while the beet is in
// trouble) that went out (or was suppressed) at least the channel's
// reminder period ago while the beet is still in trouble. An alert still
// retrying gets no reminders: they would arrive in a burst with it. The
// reminder's number is one more than the highest of its incident on the
// channel, so a move between down and anomalous in one incident does not
// restart the count. Only channels that still serve the beet get one (a
// channel taken off the beet is done with it), as with CreateSettled. The
// unique index on (channel, incident, reminder) makes concurrent passes on
// several instances add each reminder once.
func (db *DB) CreateReminders(ctx context.Context, now time.Time) (int, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `INSERT INTO deliveries
		(channel_id, beet_id, flip_id, incident_flip_id, event, reminder, status, next_at, created_at)
		SELECT d.channel_id, d.beet_id, d.flip_id, d.incident_flip_id,
			CASE WHEN d.event = '`+beet.EventSettled+`' THEN (CASE WHEN b.status = 'down' THEN 'beet.down' ELSE 'beet.anomalous' END) ELSE d.event END,
			COALESCE((SELECT MAX(r.reminder) FROM deliveries r WHERE r.channel_id = d.channel_id
				AND r.incident_flip_id = d.incident_flip_id AND r.reminder > 0), 0) + 1,
			'pending', $1, $1
		FROM channels c
		JOIN deliveries d ON d.channel_id = c.id
		JOIN beets b ON b.id = d.beet_id
		WHERE c.reminder_every > 0
			AND d.event IN ('beet.down', 'beet.anomalous', '`+beet.EventSettled+`')
			AND b.status IN `+troubleStatuses+`
			AND d.status <> 'pending'
			AND COALESCE(d.last_at, d.created_at) <= $1 - c.reminder_every * 1000000
			AND d.id = (SELECT MAX(l.id) FROM deliveries l WHERE l.channel_id = d.channel_id AND l.beet_id = d.beet_id)
			AND EXISTS (SELECT 1 FROM beet_channels bc WHERE bc.beet_id = d.beet_id AND bc.channel_id = d.channel_id)
		ON CONFLICT DO NOTHING`, toMicros(stamp(now))))
	if err != nil {
		return 0, fmt.Errorf("create reminders: %w", err)
	}
	return int(n), nil
}

// CreateSettled adds one beet.settled delivery for every (channel, beet)
// whose newest flapping notice was sent and never followed by another
// message about a flip (only suppressed ones), once the beet has not
// flipped for quiet. It is about the beet's latest flip (its current
// state). Its incident is the flapping notice's while the beet is up or
// paused (a PagerDuty resolve closes what the notice opened), and the
// beet's open incident while it is down or anomalous (later reminders and
// the recovery carry that one). The unique index on (channel, flip) for
// settled messages makes concurrent passes on several instances add each
// one once. Flapping notices older than 7 days are not looked at.
func (db *DB) CreateSettled(ctx context.Context, now time.Time, quiet time.Duration) (int, error) {
	now = stamp(now)
	n, err := rowsAffected(db.write.ExecContext(ctx, `INSERT INTO deliveries
		(channel_id, beet_id, flip_id, incident_flip_id, event, status, next_at, created_at)
		SELECT f.channel_id, f.beet_id, l.id,
			CASE WHEN b.status IN `+troubleStatuses+` THEN COALESCE((SELECT MAX(o.id) FROM flips o WHERE o.beet_id = b.id
				AND o.to_status IN `+troubleStatuses+` AND o.from_status NOT IN `+troubleStatuses+`), f.incident_flip_id)
			ELSE f.incident_flip_id END,
			'`+beet.EventSettled+`', 'pending', $1, $1
		FROM deliveries f
		JOIN beets b ON b.id = f.beet_id
		JOIN flips l ON l.id = (SELECT MAX(x.id) FROM flips x WHERE x.beet_id = f.beet_id)
		WHERE f.flapping AND f.status <> 'pending' AND f.created_at >= $3
			AND f.id = (SELECT MAX(g.id) FROM deliveries g WHERE g.channel_id = f.channel_id AND g.beet_id = f.beet_id AND g.flapping)
			AND b.status IN ('up', 'down', 'anomalous', 'paused')
			AND l.at <= $2
			AND EXISTS (SELECT 1 FROM beet_channels bc WHERE bc.beet_id = f.beet_id AND bc.channel_id = f.channel_id)
			AND NOT EXISTS (SELECT 1 FROM deliveries s WHERE s.channel_id = f.channel_id AND s.beet_id = f.beet_id AND s.id > f.id
				AND (s.status = 'pending' OR (s.reminder = 0 AND (s.status <> 'suppressed' OR s.event = '`+beet.EventSettled+`'))))
		ON CONFLICT DO NOTHING`, toMicros(now), toMicros(now.Add(-quiet)), toMicros(now.Add(-7*24*time.Hour))))
	if err != nil {
		return 0, fmt.Errorf("create settled: %w", err)
	}
	return int(n), nil
}

// FindOpenFlapping returns the newest flapping notice of the channel and
// beet before delivery beforeID if no message about a flip was sent after
// it (only suppressed ones), or nil: the incident that notice opened may
// still be open at the receiver.
func (db *DB) FindOpenFlapping(ctx context.Context, channelID, beetID, beforeID int64) (*beet.Delivery, error) {
	d, err := scanDelivery(db.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries f
		WHERE f.id = (SELECT MAX(g.id) FROM deliveries g WHERE g.channel_id = $1 AND g.beet_id = $2 AND g.flapping AND g.id < $3)
			AND NOT EXISTS (SELECT 1 FROM deliveries s WHERE s.channel_id = f.channel_id AND s.beet_id = f.beet_id
				AND s.id > f.id AND s.id < $3 AND s.reminder = 0 AND s.status <> 'suppressed')`,
		channelID, beetID, beforeID))
	if err == sql.ErrNoRows {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("find open flapping notice: %w", err)
	}
	return d, nil
}

// IncidentSent reports whether a message of the incident that flip
// incidentFlipID opened went out to the channel (delivered, or failed
// after trying) before delivery beforeID: the receiver may have an open
// incident that only a later message closes.
func (db *DB) IncidentSent(ctx context.Context, channelID, incidentFlipID, beforeID int64) (bool, error) {
	var sent bool
	err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries WHERE channel_id = $1
		AND incident_flip_id = $2 AND id < $3 AND status IN ('delivered', 'failed'))`,
		channelID, incidentFlipID, beforeID).Scan(&sent)
	if err != nil {
		return false, fmt.Errorf("incident sent: %w", err)
	}
	return sent, nil
}

// DeleteDeliveriesBefore removes finished deliveries created before t, at
// most limit of them, and returns how many it removed.
func (db *DB) DeleteDeliveriesBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries
		WHERE created_at < $1 AND status <> 'pending' LIMIT $2`+db.d.skipLocked()+`)`, toMicros(t), limit))
	if err != nil {
		return 0, fmt.Errorf("delete deliveries: %w", err)
	}
	return int(n), nil
}

func scanDelivery(s scanner) (*beet.Delivery, error) {
	var (
		d                        beet.Delivery
		beetID, flipID, incident sql.NullInt64
		status                   string
		next, created            int64
		first, last              sql.NullInt64
		latency                  int64
	)
	err := s.Scan(&d.ID, &d.ChannelID, &beetID, &flipID, &incident, &d.Event, &d.Reminder, &d.Flapping, &status,
		&d.Attempts, &next, &created, &first, &last, &latency, &d.Error)
	if err != nil {
		return nil, err
	}
	d.BeetID, d.FlipID, d.IncidentFlipID = beetID.Int64, flipID.Int64, incident.Int64
	d.Status = beet.DeliveryStatus(status)
	d.NextAt, d.CreatedAt = fromMicros(next), fromMicros(created)
	d.FirstAt, d.LastAt = fromNullMicros(first), fromNullMicros(last)
	d.Latency = time.Duration(latency) * time.Microsecond
	return &d, nil
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// cut bounds a stored error text.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		n--
	}
	return s[:n]
}

// notFoundAs is notFound with another code, for a row that exists but is
// not in the state asked for.
func notFoundAs(err error, code, format string, args ...any) error {
	if err == sql.ErrNoRows {
		return beet.Errorf(code, format, args...)
	}
	return err
}
