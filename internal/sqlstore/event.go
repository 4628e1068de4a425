package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ping"
)

// AddEvents stores events in one transaction and moves each beet's
// last_event_at forward, never back. Events whose ID is already stored are
// skipped, so replaying a batch is harmless. An event with a Token belongs
// to the beet that has that token when it commits (its BeetID, if set,
// must agree); one without, to the beet of its BeetID. Events of beets that
// no longer exist, or whose token is no longer any beet's, are dropped: a
// beet deleted or rotated while its events waited in a buffer must not
// make the rest of the batch fail, and a rotated token records nothing.
// AddEvents sets each event's BeetID to the beet it was stored for, or to
// 0 if it was dropped, so the caller learns what its tokens resolved to.
//
// The beets are read and locked first, observe (if any) applies the events
// to each of them in memory, and each beet is written back once with its
// flips: detection rides on the ingestion commit instead of a transaction
// of its own, which on SQLite would queue behind the single writer.
func (db *DB) AddEvents(ctx context.Context, events []beet.Event, observe beet.Observer) error {
	return db.addEvents(ctx, events, observe, true)
}

// SyncsApart reports whether AddEventsUnsynced can return before its commit
// is on disk (SQLite on Linux). Elsewhere it is AddEvents.
func (db *DB) SyncsApart() bool { return db.wal != nil }

// AddEventsUnsynced is AddEvents whose commit may return before it is on
// disk: it survives a crash of Beet at once, and a power cut once
// SyncEvents, called after it returned, has returned nil. On SQLite the
// commit runs with synchronous=NORMAL (the connection goes back to FULL
// after it, for every other write), so the next group can be committed
// while the fsync of this one runs.
func (db *DB) AddEventsUnsynced(ctx context.Context, events []beet.Event, observe beet.Observer) error {
	return db.addEvents(ctx, events, observe, db.wal == nil)
}

// SyncEvents makes durable every commit AddEventsUnsynced returned before
// the call: one fsync of the SQLite WAL. After a failed fsync it fails, and
// so do AddEvents and AddEventsUnsynced, until Beet restarts.
func (db *DB) SyncEvents() error {
	if db.wal == nil {
		return nil
	}
	return db.wal.sync()
}

func (db *DB) addEvents(ctx context.Context, events []beet.Event, observe beet.Observer, synced bool) error {
	if len(events) == 0 {
		return nil
	}
	var ids []int64
	var toks []string
	for i := range events {
		if events[i].Token != "" {
			toks = append(toks, events[i].Token)
		} else {
			ids = append(ids, events[i].BeetID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	slices.Sort(toks)
	toks = slices.Compact(toks)
	var (
		touched  []*beet.Beet
		versions map[int64]int64
		err      error
	)
	touched, versions, err = db.d.addEvents(ctx, db, events, observe, ids, toks, synced)
	if err != nil {
		return fmt.Errorf("add events: %w", err)
	}
	for _, b := range touched {
		// saveBeets raised the version by one. The beet is this call's
		// own (a copy from the cache, the cache's own taken out of it on
		// SQLite, or a row read in full), so the cache takes it as it is.
		db.beets.keep(b, versions[b.ID]+1)
	}
	return nil
}

// addEventsSQLite is AddEvents on SQLite: prepared statements, the group's
// beets saved in one UPDATE and its events in multi-row INSERTs. Unless
// synced, the commit leaves its fsync to SyncEvents.
func (db *DB) addEventsSQLite(ctx context.Context, events []beet.Event, observe beet.Observer, ids []int64, toks []string, synced bool) (
	touched []*beet.Beet, versions map[int64]int64, err error) {
	if db.wal != nil {
		if err := db.wal.failed(); err != nil {
			return nil, nil, err
		}
	}
	w, err := db.eventWriteStmts(ctx)
	if err != nil {
		return nil, nil, err
	}
	// ctx bounds the wait for the write connection; the transaction on it
	// runs without ctx's deadline. modernc's driver watches a cancellable
	// context with a goroutine of its own for every statement, BEGIN and
	// COMMIT included: about 30 allocations and as many scheduler hand-offs
	// a commit, more than a small group's own statements cost. What could
	// hold this commit up is another process's write lock, and BEGIN
	// IMMEDIATE gives up on that after busy_timeout (the group then goes to
	// the spool, as after a deadline).
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	ctx = context.WithoutCancel(ctx)
	if !synced {
		// PRAGMA synchronous takes effect when it is prepared, and not
		// inside a transaction: it is run as text, before BEGIN.
		if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
			return nil, nil, err
		}
		defer func() {
			if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil { // ctx cannot end: see above
				// A connection left at NORMAL would drop the fsync of
				// every other write: it is closed instead (the pool opens
				// a new one, FULL from its DSN).
				db.log.Error("restoring synchronous=FULL failed; closing the write connection", "err", err)
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	var held map[int64]*beet.Beet
	err = txOn(ctx, conn, func(tx *sql.Tx) error {
		beets, byToken, vs, err := db.lockBeets(ctx, tx, w, ids, toks)
		if err != nil {
			return err
		}
		held, versions = beets, vs
		var flips []beet.Flip
		touched, flips = applyEvents(events, beets, byToken, observe)
		for i := range flips {
			if err := insertFlip(ctx, tx, &flips[i]); err != nil {
				return fmt.Errorf("beet %d: %w", flips[i].BeetID, err)
			}
		}
		if err := db.saveBeets(ctx, tx, w.save, touched); err != nil {
			return err
		}
		return insertEvents(ctx, tx, w.insert, events)
	})
	if err != nil {
		// A failed COMMIT may still have reached the file: the cache
		// forgets these beets rather than trust its older copies (those
		// lockBeets took out of it are out already).
		for id := range held {
			db.beets.drop(id)
		}
		return nil, nil, err
	}
	// The beets taken from the cache that got no event go back as they
	// were; addEvents keeps the touched ones at their new version.
	for id, b := range held {
		if _, ok := slices.BinarySearchFunc(touched, id, func(t *beet.Beet, id int64) int { return cmp.Compare(t.ID, id) }); !ok {
			db.beets.keep(b, versions[id])
		}
	}
	return touched, versions, nil
}

// applyEvents is ping.Apply with the flips' times at the stored
// precision: what a group of events does to its beets is decided there,
// with no I/O; the commit around it only reads and writes.
func applyEvents(events []beet.Event, beets map[int64]*beet.Beet, byToken map[string]*beet.Beet, observe beet.Observer) (
	touched []*beet.Beet, flips []beet.Flip) {
	touched, flips = ping.Apply(events, beets, byToken, observe)
	for i := range flips {
		flips[i].At = stamp(flips[i].At)
	}
	return touched, flips
}

// probeLists splits the tokens into the IDs of beets the cache knows them
// for, added to ids, and the tokens it does not know: beets are probed by
// primary key where they can be.
func (db *DB) probeLists(ids []int64, toks []string) (probeIDs []int64, probeToks []string) {
	probeIDs = slices.Clone(ids)
	for _, t := range toks {
		if id, ok := db.beets.idOf(t); ok {
			probeIDs = append(probeIDs, id)
		} else {
			probeToks = append(probeToks, t)
		}
	}
	slices.Sort(probeIDs)
	return slices.Compact(probeIDs), probeToks
}

// misprobed returns the tokens that were probed by the ID the cache knew
// them for, and that no beet read has: the beet was rotated, or deleted,
// and a UUID token may be another beet's now (an imported beet deleted and
// imported again). The cache forgets them; the caller reads them by token,
// so an event is never dropped for a stale hint.
func (db *DB) misprobed(toks []string, byToken map[string]*beet.Beet) []string {
	var again []string
	for _, t := range toks {
		if byToken[t] != nil {
			continue
		}
		if _, ok := db.beets.byToken.Peek(t); ok {
			db.beets.byToken.Remove(t)
			again = append(again, t)
		}
	}
	return again
}

// lockBeets reads, inside tx, the beets with the given IDs or tokens (both
// sorted), by ID and by token, and the version of each (SQLite). A beet the
// cache holds is not read at all: takeBeetChanges first makes the cache
// forget every beet changed since this store's last commit by anything
// but that commit, so what it still holds is the row. The rest are read
// in full, by primary key for the tokens the cache knows. SQLite's single
// writer keeps a concurrent rotation, deletion or sweeper flip out until
// this commit ends.
func (db *DB) lockBeets(ctx context.Context, tx *sql.Tx, w eventWrites, ids []int64, toks []string) (
	beets map[int64]*beet.Beet, byToken map[string]*beet.Beet, versions map[int64]int64, err error) {
	if err := db.takeBeetChanges(ctx, tx, w); err != nil {
		return nil, nil, nil, err
	}
	probeIDs, probeToks := db.probeLists(ids, toks)
	beets = make(map[int64]*beet.Beet, len(probeIDs)+len(probeToks))
	versions = make(map[int64]int64, len(probeIDs)+len(probeToks))
	var missing []int64
	for _, id := range probeIDs {
		if b, v, ok := db.beets.take(id); ok {
			beets[id], versions[id] = b, v
		} else {
			missing = append(missing, id)
		}
	}
	read := func(rows *sql.Rows, err error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var version int64
			b, err := scanBeet(rows, &version)
			if err != nil {
				return err
			}
			beets[b.ID], versions[b.ID] = b, version
		}
		return rows.Err()
	}
	// The lists are padded to one of a few sizes (repeating their last
	// item) so each size's statement is prepared once.
	err = inChunks(missing, func(args []any, size int) error {
		return read(tx.StmtContext(ctx, w.find[size]).QueryContext(ctx, args...))
	})
	readTokens := func(toks []string) error {
		return inChunks(toks, func(args []any, size int) error {
			return read(tx.StmtContext(ctx, w.findToken[size]).QueryContext(ctx, args...))
		})
	}
	if err == nil {
		err = readTokens(probeToks)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	byToken = tokenIndex(beets)
	if again := db.misprobed(toks, byToken); len(again) > 0 {
		if err := readTokens(again); err != nil {
			return nil, nil, nil, err
		}
		byToken = tokenIndex(beets)
	}
	return beets, byToken, versions, nil
}

// maxChangesRead bounds the beet_changes rows a commit reads.
const maxChangesRead = 4096

// takeBeetChanges makes the cache forget, inside tx, the beets whose rows
// changed since this store's last ingestion commit by anything else: the
// beets listed in beet_changes (filled by triggers on every other insert,
// update and deletion of a beet, in any process: migration 00016), which
// it empties, or every beet if ingest_owner names another store, whose
// commits may have changed beets or emptied the list unseen. So a cached
// beet is its row; nothing rests on every writer remembering the cache.
func (db *DB) takeBeetChanges(ctx context.Context, tx *sql.Tx, w eventWrites) error {
	rows, err := tx.StmtContext(ctx, w.changes).QueryContext(ctx)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		owner   sql.NullString
		id      sql.NullInt64
		mine    bool
		changed int
	)
	for rows.Next() {
		if err := rows.Scan(&owner, &id); err != nil {
			return err
		}
		if owner.Valid {
			mine = owner.String == db.owner
		} else {
			db.beets.drop(id.Int64)
			changed++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// The list empties itself at 4,096 rows and clears the owner (a
	// trigger); should it still be longer than maxChangesRead, it is not
	// read to its end but emptied, and the cache forgets everything.
	if !mine || changed >= maxChangesRead {
		db.beets.purge()
	}
	if !mine {
		if _, err := tx.StmtContext(ctx, w.setOwner).ExecContext(ctx, db.owner); err != nil {
			return err
		}
	}
	if changed > 0 {
		if _, err := tx.StmtContext(ctx, w.clearChanges).ExecContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// tokenIndex maps each beet's token to it.
func tokenIndex(beets map[int64]*beet.Beet) map[string]*beet.Beet {
	byToken := make(map[string]*beet.Beet, len(beets))
	for _, b := range beets {
		byToken[b.Token] = b
	}
	return byToken
}

// nonNil gives pgx an empty array rather than NULL.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// inChunks calls query with the items in padded chunks of the idChunks
// sizes.
func inChunks[T any](items []T, query func(args []any, size int) error) error {
	for len(items) > 0 {
		n := min(len(items), idChunks[len(idChunks)-1])
		size := idChunks[0]
		for _, c := range idChunks {
			if c >= n {
				size = c
				break
			}
		}
		args := make([]any, size)
		for i := range size {
			args[i] = items[min(i, n-1)]
		}
		if err := query(args, size); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// idChunks are the list sizes of the prepared lookups: powers of two, so
// padding at most doubles a list.
var idChunks = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// findInSQL selects columns of the beets whose column is one of n values,
// in SQLite's anonymous placeholders (bound by position).
func findInSQL(columns, column string, n int) string {
	return `SELECT ` + columns + ` FROM beets WHERE ` + column + ` IN (?` + strings.Repeat(",?", n-1) + `)`
}

// saveBeetsSQLite returns an UPDATE of n beets' state in one statement,
// in SQLite's anonymous placeholders, eight a beet in saveBeets' order.
func saveBeetsSQLite(n int) string {
	var b strings.Builder
	b.WriteString(`WITH v (id, last_event_at, status, status_reason, status_since, due_at, model, runs) AS (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?,?,?,?,?,?,?,?)`)
	}
	b.WriteString(`) UPDATE beets SET last_event_at = v.last_event_at, status = v.status, status_reason = v.status_reason,
		status_since = v.status_since, due_at = v.due_at, model = v.model, runs = v.runs, version = version + 1
		FROM v WHERE beets.id = v.id`)
	return b.String()
}

// saveBeets writes back what AddEvents changed on each beet (SQLite), with
// the prepared multi-beet UPDATEs of save (by beet count, in the sizes of
// insertEventSizes), so a commit runs a few statements, not one a beet.
func (db *DB) saveBeets(ctx context.Context, tx *sql.Tx, save map[int]*sql.Stmt, beets []*beet.Beet) error {
	const cols = 8
	args := make([]any, 0, cols*min(len(beets), insertEventSizes[0]))
	for len(beets) > 0 {
		size := insertEventSizes[len(insertEventSizes)-1]
		for _, c := range insertEventSizes {
			if c <= len(beets) {
				size = c
				break
			}
		}
		args = args[:0]
		for _, b := range beets[:size] {
			runs, err := encodeRuns(b.Runs)
			if err != nil {
				return fmt.Errorf("beet %d: %w", b.ID, err)
			}
			args = append(args, b.ID, nilMicros(b.LastEventAt), string(b.Status), b.StatusReason,
				toMicros(b.StatusSince), nilMicros(b.DueAt), nilBytes(b.Model), runs)
		}
		if _, err := tx.StmtContext(ctx, save[size]).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("save %d beets from %d: %w", size, beets[0].ID, err)
		}
		beets = beets[size:]
	}
	return nil
}

func nilMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return toMicros(*t)
}

// nilBytes keeps a nil model NULL, as database/sql stores a nil []byte.
func nilBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func microsPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	us := toMicros(*t)
	return &us
}

// encodeRuns writes a beet's runs for the runs column: ” for a beet that
// never sent a start, so plain beets pay no encoding.
func encodeRuns(r beet.Runs) (string, error) {
	if r.Zero() {
		return "", nil
	}
	b, err := json.Marshal(r)
	return string(b), err
}

func decodeRuns(s string, r *beet.Runs) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), r)
}

// eventWrites are AddEvents' prepared statements on SQLite, prepared
// before its transaction: SQLite's one write connection is busy once it
// begins. (PostgreSQL's are pgx's statement cache: see addEventsPG.)
type eventWrites struct {
	find         map[int]*sql.Stmt // beets and their versions by a padded ID list, by size
	findToken    map[int]*sql.Stmt // the same by a padded token list
	save         map[int]*sql.Stmt // beets' state, by beet count (insertEventSizes)
	insert       map[int]*sql.Stmt // events, by row count (insertEventSizes)
	changes      *sql.Stmt         // ingest_owner's owner, then beet_changes' IDs
	setOwner     *sql.Stmt
	clearChanges *sql.Stmt
}

// eventWriteStmts prepares them on the first call that succeeds and then
// hands out the same set: every commit needs them, and building their SQL
// text to look them up cost a commit more than it should.
func (db *DB) eventWriteStmts(ctx context.Context) (eventWrites, error) {
	db.eventsMu.Lock()
	defer db.eventsMu.Unlock()
	if db.events != nil {
		return *db.events, nil
	}
	w := eventWrites{find: map[int]*sql.Stmt{}, findToken: map[int]*sql.Stmt{}}
	var err error
	for _, n := range idChunks {
		if w.find[n], err = db.prepared(ctx, db.write, findInSQL(beetColumns+", version", "id", n)); err != nil {
			return w, err
		}
		if w.findToken[n], err = db.prepared(ctx, db.write, findInSQL(beetColumns+", version", "token", n)); err != nil {
			return w, err
		}
	}
	if w.changes, err = db.prepared(ctx, db.write,
		`SELECT owner, NULL FROM ingest_owner UNION ALL SELECT NULL, beet_id FROM beet_changes LIMIT `+strconv.Itoa(maxChangesRead+1)); err != nil {
		return w, err
	}
	if w.setOwner, err = db.prepared(ctx, db.write, `UPDATE ingest_owner SET owner = ?`); err != nil {
		return w, err
	}
	if w.clearChanges, err = db.prepared(ctx, db.write, `DELETE FROM beet_changes`); err != nil {
		return w, err
	}
	w.save, w.insert = map[int]*sql.Stmt{}, map[int]*sql.Stmt{}
	for _, n := range insertEventSizes {
		if w.save[n], err = db.prepared(ctx, db.write, saveBeetsSQLite(n)); err != nil {
			return w, err
		}
		if w.insert[n], err = db.prepared(ctx, db.write, insertEventsSQLite(n)); err != nil {
			return w, err
		}
	}
	db.events = &w
	return w, nil
}

// insertEventSizes are the row counts of the prepared event INSERTs on
// SQLite, largest first: a group is written as a sum of them (26 events as
// 16 + 8 + 2 rows), so a commit runs a few statements, not one an event.
var insertEventSizes = []int{64, 32, 16, 8, 4, 2, 1}

// insertEvents writes the events that have a beet (BeetID not 0) with the
// prepared multi-row INSERTs of insert (by row count). Values are passed
// as the driver takes them (int64, []byte, string, nil for NULL), so
// database/sql converts nothing.
func insertEvents(ctx context.Context, tx *sql.Tx, insert map[int]*sql.Stmt, events []beet.Event) error {
	n := 0
	for i := range events {
		if events[i].BeetID != 0 {
			n++
		}
	}
	args := make([]any, 0, eventCols*min(n, insertEventSizes[0]))
	next := 0 // the first event not yet written
	for n > 0 {
		size := insertEventSizes[len(insertEventSizes)-1]
		for _, c := range insertEventSizes {
			if c <= n {
				size = c
				break
			}
		}
		args = args[:0]
		for len(args) < eventCols*size {
			e := &events[next]
			next++
			if e.BeetID == 0 {
				continue
			}
			args = append(args, toMicros(e.ReceivedAt), e.ID[:], e.BeetID, nilFloat(e.Value), e.Method, e.UserAgent,
				string(e.Kind.Normal()), nilInt(e.ExitCode), nilMillis(e.Duration), nilString(e.Message))
		}
		if _, err := tx.StmtContext(ctx, insert[size]).ExecContext(ctx, args...); err != nil {
			return err
		}
		n -= size
	}
	return nil
}

// nilFloat, nilInt, nilMillis and nilString are the nullable columns'
// values for the SQLite insert: nil for NULL, else what the driver binds.
func nilFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func nilInt(i *int) any {
	if i == nil {
		return nil
	}
	return int64(*i)
}

func nilMillis(d *time.Duration) any {
	if d == nil {
		return nil
	}
	return d.Milliseconds()
}

func nilString(s string) any {
	if s == "" {
		return nil // most events carry no message
	}
	return s
}

// insertEventsSQLite returns an INSERT of n rows in SQLite's anonymous
// placeholders (bound by position, with no parameter names to look up),
// in insertEvents' argument order.
func insertEventsSQLite(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (received_at, id, beet_id, value, method, user_agent,
		kind, exit_code, duration_ms, message) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?,?,?,?,?,?,?,?,?,?)`)
	}
	b.WriteString(` ON CONFLICT DO NOTHING`)
	return b.String()
}

// eventCols is the number of columns an event INSERT writes per event.
const eventCols = 10

// FindEvents returns a beet's events newest first. Since is inclusive and
// Until exclusive; Limit 0 means beet.DefaultPageLimit and larger limits are
// cut to beet.MaxPageLimit. An unknown beet has no events.
func (db *DB) FindEvents(ctx context.Context, f beet.EventFilter) ([]*beet.Event, error) {
	query := `SELECT id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message
		FROM events WHERE beet_id = $1`
	args := []any{f.BeetID}
	if f.Since != nil {
		args = append(args, toMicros(*f.Since))
		query += ` AND received_at >= $` + strconv.Itoa(len(args))
	}
	switch {
	case f.Until != nil && f.BeforeID != nil:
		// Bytes compare as the IDs sort (memcmp in SQLite, bytea in PostgreSQL).
		args = append(args, toMicros(*f.Until), f.BeforeID[:])
		u, id := strconv.Itoa(len(args)-1), strconv.Itoa(len(args))
		query += ` AND (received_at < $` + u + ` OR received_at = $` + u + ` AND id < $` + id + `)`
	case f.Until != nil:
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
			kind     string
			code     sql.NullInt64
			duration sql.NullInt64
			message  sql.NullString
		)
		if err := rows.Scan(&id, &e.BeetID, &received, &value, &e.Method, &e.UserAgent, &kind, &code, &duration, &message); err != nil {
			return nil, fmt.Errorf("find events: %w", err)
		}
		if len(id) != len(e.ID) {
			return nil, fmt.Errorf("find events: event ID of %d bytes, want %d", len(id), len(e.ID))
		}
		copy(e.ID[:], id)
		e.ReceivedAt, e.Value = fromMicros(received), fromNullFloat(value)
		e.Kind, e.Message = beet.EventKind(kind), message.String
		if code.Valid {
			c := int(code.Int64)
			e.ExitCode = &c
		}
		if duration.Valid {
			d := time.Duration(duration.Int64) * time.Millisecond
			e.Duration = &d
		}
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
	ids, err := scanIDs(db.read.QueryContext(ctx, `SELECT b.id FROM beets b JOIN accounts a ON a.id = b.account_id
		WHERE a.plan = $1 AND b.id > $2
		AND EXISTS (SELECT 1 FROM events e WHERE e.beet_id = b.id AND e.received_at < $3)
		ORDER BY b.id LIMIT $4`, string(p), afterID, toMicros(cutoff), pageLimit(limit)))
	if err != nil {
		return nil, fmt.Errorf("beets with events before: %w", err)
	}
	return ids, nil
}

// DeleteEventsBefore deletes up to limit of the beet's oldest events older
// than cutoff in one short statement and returns how many it deleted. On
// PostgreSQL the rows are claimed with SKIP LOCKED, so several instances can
// clean up at once without waiting for each other or deleting twice. Limit
// 0 means beet.DefaultPageLimit; larger limits are cut to beet.MaxPageLimit.
func (db *DB) DeleteEventsBefore(ctx context.Context, beetID int64, cutoff time.Time, limit int) (int64, error) {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM events WHERE (received_at, id) IN (
		SELECT received_at, id FROM events WHERE beet_id = $1 AND received_at < $2
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
