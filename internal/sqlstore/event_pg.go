package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/beethq/beet"
)

// On PostgreSQL every statement is a network round trip, and the commit
// waits for it. So AddEvents talks pgx on one connection of its own pool
// (where statements run generic plans: openPGIngest) and pipelines its
// statements.
//
// When the cache holds every beet of the group (the usual case: a beet's
// events after its first), detection runs first, on the cached copies,
// and the commit is one statement, which PostgreSQL runs as one implicit
// transaction: the beets' new state written only where each row is still
// at the version the cache holds (an UPDATE … FROM unnest that fails
// unless it wrote every row, so nothing of the statement is committed)
// and the events. If any beet changed meanwhile (the sweeper, the API, a
// rotation, another instance), nothing is written and the group takes the
// locked path, from the rows as stored. A group with flips (rare) writes its
// beets in an explicit transaction, then the flips, then the events.
//
// The locked path is two batches:
//
//  1. BEGIN and the read of the group's beets, locked in ID order (FOR
//     UPDATE): whole rows, of which only those the cache does not hold
//     at their version are decoded;
//  2. the beets' new state (one UPDATE … FROM unnest), the events (one
//     INSERT … SELECT FROM unnest) and COMMIT.
//
// Detection runs in memory between the two. Flips, which are rare (a beet
// changing status), go in between, through database/sql on the same
// connection, since their notifications depend on what is stored.

// pgLockBeetsSQL reads (id, token, version) and then the beetColumns of the
// beets with the given IDs or tokens, and locks them.
const pgLockBeetsSQL = `SELECT id, token, version, ` + beetColumns + ` FROM beets
	WHERE id = ANY($1::bigint[]) OR token = ANY($2::text[]) ORDER BY id FOR UPDATE`

const pgSaveBeetsSQL = `UPDATE beets SET last_event_at = v.last, status = v.status,
	status_reason = v.reason, status_since = v.since, due_at = v.due, model = v.model, runs = v.runs,
	version = beets.version + 1
	FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bytea[], $8::text[])
	AS v(id, last, status, reason, since, due, model, runs) WHERE beets.id = v.id`

const pgInsertEventsSQL = `INSERT INTO events (id, beet_id, received_at, value, method, user_agent,
	kind, exit_code, duration_ms, message)
	SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::float8[], $5::text[], $6::text[],
	$7::text[], $8::smallint[], $9::bigint[], $10::text[])
	ON CONFLICT DO NOTHING` // the key is (received_at, id) since events are partitioned (00012)

// pgSaveCachedCTE is pgSaveBeetsSQL for beets read from the cache, as a
// CTE named saved: it writes a row only at the version the cache holds
// ($9). Rows are written in the order of the arrays (ID order), so it
// takes its row locks in the order the locked path does.
const pgSaveCachedCTE = `WITH saved AS (UPDATE beets SET last_event_at = v.last, status = v.status,
	status_reason = v.reason, status_since = v.since, due_at = v.due, model = v.model, runs = v.runs,
	version = beets.version + 1
	FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bytea[], $8::text[], $9::bigint[])
	AS v(id, last, status, reason, since, due, model, runs, version) WHERE beets.id = v.id AND beets.version = v.version
	RETURNING 1)`

// pgSavedEveryRow divides by zero unless pgSaveCachedCTE wrote every row,
// which aborts the transaction: its events are never committed for a beet
// that changed meanwhile, or for a token that is no longer the beet's.
const pgSavedEveryRow = `(SELECT 1 / (count(*) = cardinality($1::bigint[]))::int FROM saved)`

// pgSaveCachedSQL writes the cached beets alone (a group with flips).
const pgSaveCachedSQL = pgSaveCachedCTE + `
	SELECT ` + pgSavedEveryRow

// pgCommitCachedSQL is the cached path's whole commit in one statement:
// the beets ($1-$9) and pgInsertEventsSQL's events ($10-$19), inserted
// only past pgSavedEveryRow, so the statement, and with it the implicit
// transaction, fails whole. One statement instead of two spares
// PostgreSQL an executor start-up and shut-down, a portal and their
// messages on every commit.
const pgCommitCachedSQL = pgSaveCachedCTE + `
	INSERT INTO events (id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message)
	SELECT * FROM unnest($10::bytea[], $11::bigint[], $12::bigint[], $13::float8[], $14::text[], $15::text[],
	$16::text[], $17::smallint[], $18::bigint[], $19::text[])
	WHERE ` + pgSavedEveryRow + ` = 1
	ON CONFLICT DO NOTHING`

// errCacheStale is the cached path's way of saying that a beet was not at
// the version the cache holds: the group takes the locked path.
var errCacheStale = errors.New("a cached beet changed")

// lockedColumns is how many columns pgLockBeetsSQL puts before the beetColumns.
const lockedColumns = 3

var beetColumnCount = strings.Count(beetColumns, ",") + 1

// addEventsPG is AddEvents on PostgreSQL, where every commit is synced.
func (db *DB) addEventsPG(ctx context.Context, events []beet.Event, observe beet.Observer, ids []int64, toks []string) (
	touched []*beet.Beet, versions map[int64]int64, err error) {
	conn, err := db.ingest.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	open := false // a transaction is open on conn
	rollback := func() {
		// Never hand the pool a connection inside a transaction (pgx's
		// stdlib would discard it; this keeps it).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_, _ = conn.ExecContext(rctx, "ROLLBACK")
		cancel()
		open = false
	}
	defer func() {
		if open {
			rollback()
		}
	}()

	if beets, versions, ok := db.cachedBeets(ids, toks); ok && !db.pgLockedOnly {
		matched := make([]eventMatch, len(events))
		for i := range events {
			matched[i] = eventMatch{events[i].BeetID, events[i].Stale}
		}
		touched, err := db.addEventsPGCached(ctx, conn, &open, events, observe, beets, versions)
		if !errors.Is(err, errCacheStale) {
			return touched, versions, err
		}
		if open {
			rollback()
		}
		for i, m := range matched {
			events[i].BeetID, events[i].Stale = m.beetID, m.stale
		}
		db.pgStale.Add(1)
	}
	return db.addEventsPGLocked(ctx, conn, &open, events, observe, ids, toks)
}

// eventMatch is what applyEvents changes on an event.
type eventMatch struct {
	beetID int64
	stale  bool
}

// cachedBeets returns copies of the group's beets from the cache, by ID,
// and their versions, if the cache holds every one of them (each token's
// beet with that token).
func (db *DB) cachedBeets(ids []int64, toks []string) (map[int64]*beet.Beet, map[int64]int64, bool) {
	beets := make(map[int64]*beet.Beet, len(ids)+len(toks))
	versions := make(map[int64]int64, len(ids)+len(toks))
	add := func(id int64, token string) bool {
		if _, ok := beets[id]; ok {
			return true
		}
		b, v, ok := db.beets.latest(id)
		if !ok || token != "" && b.Token != token {
			return false
		}
		beets[id], versions[id] = b, v
		return true
	}
	for _, id := range ids {
		if !add(id, "") {
			return nil, nil, false
		}
	}
	for _, t := range toks {
		id, ok := db.beets.idOf(t)
		if !ok || !add(id, t) {
			return nil, nil, false
		}
	}
	return beets, versions, true
}

// addEventsPGCached commits the group from the cached beets, or returns
// errCacheStale, having written nothing, if one of them changed, or if an
// event matches none of them: a decision to drop an event is taken on the
// locked path. *open tells whether a transaction is left open on conn.
func (db *DB) addEventsPGCached(ctx context.Context, conn *sql.Conn, open *bool, events []beet.Event, observe beet.Observer,
	beets map[int64]*beet.Beet, versions map[int64]int64) ([]*beet.Beet, error) {
	touched, flips := applyEvents(events, beets, tokenIndex(beets), observe)
	for i := range events {
		if events[i].BeetID == 0 {
			return nil, errCacheStale
		}
	}
	if len(touched) == 0 {
		return nil, errCacheStale
	}
	args, err := pgSaveArgs(touched)
	if err != nil {
		return nil, err
	}
	vs := make([]int64, len(touched))
	for i, b := range touched {
		vs[i] = versions[b.ID]
	}
	args = append(args, vs)
	stale := func(err error) error {
		// A deadlock with a writer that locks in another order is
		// resolved by the locked path too.
		if pgCode(err, "22012") || pgCode(err, "40P01") {
			return errCacheStale
		}
		return err
	}
	if len(flips) == 0 {
		// One statement is one implicit transaction (one Sync):
		// PostgreSQL commits it whole at its end, or nothing of it if it
		// fails, with no BEGIN and COMMIT to run.
		err = conn.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn()
			if _, err := pc.Exec(ctx, pgCommitCachedSQL, append(args, pgEventArgs(events)...)...); err != nil {
				*open = pc.PgConn().TxStatus() != 'I'
				return stale(err)
			}
			return nil
		})
		return touched, err
	}
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		batch.Queue(pgSaveCachedSQL, args...)
		br := pc.SendBatch(ctx, batch)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		*open = true
		if _, err := br.Exec(); err != nil {
			br.Close()
			return stale(err)
		}
		return stale(br.Close())
	})
	if err != nil {
		return touched, err
	}
	// Flips (rare) go in once the beets are known to be as cached, and
	// the events and COMMIT after them.
	for i := range flips {
		if err := insertFlip(ctx, conn, &flips[i]); err != nil {
			return nil, fmt.Errorf("beet %d: %w", flips[i].BeetID, err)
		}
	}
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		batch := &pgx.Batch{}
		batch.Queue(pgInsertEventsSQL, pgEventArgs(events)...)
		batch.Queue("COMMIT")
		if err := pc.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
		*open = pc.PgConn().TxStatus() != 'I'
		return nil
	})
	return touched, err
}

// scanLocked reads the rows of pgLockBeetsSQL, the batch's last query,
// into beets and versions: a beet the cache holds at the row's version is
// its copy, the rest are decoded. It closes br.
func (db *DB) scanLocked(br pgx.BatchResults, beets map[int64]*beet.Beet, versions map[int64]int64) error {
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	head := make([]any, lockedColumns+beetColumnCount)
	var (
		id, version int64
		token       string
		scanErr     error
	)
	head[0], head[1], head[2] = &id, &token, &version
	for rows.Next() {
		if scanErr = rows.Scan(head...); scanErr != nil {
			break
		}
		versions[id] = version
		if b, ok := db.beets.get(id, version); ok {
			beets[id] = b
			continue
		}
		var b *beet.Beet
		if b, scanErr = scanBeet(skipScanner{rows, lockedColumns}); scanErr != nil {
			break
		}
		beets[id] = b
	}
	rows.Close()
	if err := cmp.Or(scanErr, rows.Err()); err != nil {
		br.Close()
		return err
	}
	return br.Close()
}

// addEventsPGLocked commits the group from its beets' rows, read and
// locked first.
func (db *DB) addEventsPGLocked(ctx context.Context, conn *sql.Conn, open *bool, events []beet.Event, observe beet.Observer,
	ids []int64, toks []string) (touched []*beet.Beet, versions map[int64]int64, err error) {
	probeIDs, probeToks := db.probeLists(ids, toks)
	beets := make(map[int64]*beet.Beet, len(probeIDs)+len(probeToks))
	versions = make(map[int64]int64, len(probeIDs)+len(probeToks))
	// lock reads and locks the beets, the first time in the batch that
	// opens the transaction.
	lock := func(probeIDs []int64, probeToks []string) error {
		return conn.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn()
			batch := &pgx.Batch{}
			if !*open {
				batch.Queue("BEGIN")
			}
			batch.Queue(pgLockBeetsSQL, nonNil(probeIDs), nonNil(probeToks))
			br := pc.SendBatch(ctx, batch)
			if !*open {
				if _, err := br.Exec(); err != nil {
					br.Close()
					return err
				}
				*open = true
			}
			return db.scanLocked(br, beets, versions)
		})
	}
	if err = lock(probeIDs, probeToks); err != nil {
		return nil, nil, err
	}
	byToken := tokenIndex(beets)
	if again := db.misprobed(toks, byToken); len(again) > 0 {
		if err = lock(nil, again); err != nil {
			return nil, nil, err
		}
		byToken = tokenIndex(beets)
	}

	touched, flips := applyEvents(events, beets, byToken, observe)
	for i := range flips {
		if err := insertFlip(ctx, conn, &flips[i]); err != nil {
			return nil, nil, fmt.Errorf("beet %d: %w", flips[i].BeetID, err)
		}
	}

	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		batch := &pgx.Batch{}
		if len(touched) > 0 {
			args, err := pgSaveArgs(touched)
			if err != nil {
				return err
			}
			batch.Queue(pgSaveBeetsSQL, args...)
		}
		if args := pgEventArgs(events); args != nil {
			batch.Queue(pgInsertEventsSQL, args...)
		}
		batch.Queue("COMMIT")
		if err := pc.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
		*open = pc.PgConn().TxStatus() != 'I'
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return touched, versions, nil
}

// skipScanner scans a row's columns after its first skip ones.
type skipScanner struct {
	rows pgx.Rows
	skip int
}

func (s skipScanner) Scan(dest ...any) error {
	return s.rows.Scan(append(make([]any, s.skip, s.skip+len(dest)), dest...)...)
}

// pgSaveArgs are pgSaveBeetsSQL's arrays for the beets.
func pgSaveArgs(beets []*beet.Beet) ([]any, error) {
	n := len(beets)
	ids, since := make([]int64, n), make([]int64, n)
	status, reason, runs := make([]string, n), make([]string, n), make([]string, n)
	last, due, model := make([]*int64, n), make([]*int64, n), make([][]byte, n)
	for i, b := range beets {
		ids[i], since[i] = b.ID, toMicros(b.StatusSince)
		status[i], reason[i], model[i] = string(b.Status), b.StatusReason, b.Model
		last[i], due[i] = microsPtr(b.LastEventAt), microsPtr(b.DueAt)
		r, err := encodeRuns(b.Runs)
		if err != nil {
			return nil, fmt.Errorf("beet %d: %w", b.ID, err)
		}
		runs[i] = r
	}
	return []any{ids, last, status, reason, since, due, model, runs}, nil
}

// pgEventArgs are pgInsertEventsSQL's arrays for the events that have a
// beet (BeetID not 0); nil if none has.
func pgEventArgs(events []beet.Event) []any {
	n := 0
	for i := range events {
		if events[i].BeetID != 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	var (
		ids      = make([][]byte, 0, n)
		beetIDs  = make([]int64, 0, n)
		received = make([]int64, 0, n)
		values   = make([]*float64, 0, n)
		methods  = make([]string, 0, n)
		uas      = make([]string, 0, n)
		kinds    = make([]string, 0, n)
		codes    = make([]*int16, 0, n)
		durs     = make([]*int64, 0, n)
		msgs     = make([]*string, 0, n)
	)
	for i := range events {
		e := &events[i]
		if e.BeetID == 0 {
			continue
		}
		ids = append(ids, e.ID[:])
		beetIDs = append(beetIDs, e.BeetID)
		received = append(received, toMicros(e.ReceivedAt))
		values = append(values, e.Value)
		methods = append(methods, e.Method)
		uas = append(uas, e.UserAgent)
		kinds = append(kinds, string(e.Kind.Normal()))
		var code *int16
		if e.ExitCode != nil {
			c := int16(*e.ExitCode)
			code = &c
		}
		codes = append(codes, code)
		var dur *int64
		if e.Duration != nil {
			ms := e.Duration.Milliseconds()
			dur = &ms
		}
		durs = append(durs, dur)
		var msg *string
		if e.Message != "" {
			msg = &e.Message
		}
		msgs = append(msgs, msg)
	}
	return []any{ids, beetIDs, received, values, methods, uas, kinds, codes, durs, msgs}
}
