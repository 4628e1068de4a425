package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/beethq/beet"
)

// dialect holds everything that differs between the engines once the DDL
// is in per-engine migration files; the store asks it and never compares
// engine names.
// SQLite has a single writer, so most of what PostgreSQL needs to keep
// instances apart is nothing on SQLite.
type dialect interface {
	// name is "sqlite" or "postgres", for logs and Engine.
	name() string
	goose() goose.Dialect
	// migrationsDir is the folder of the embedded migrations FS.
	migrationsDir() string
	// migrationLocker keeps instances that start together from applying
	// a migration twice; nil needs no lock.
	migrationLocker(ctx context.Context, q querier) (goose.ProviderOption, error)
	// skipLocked ends a row-claiming subquery: on PostgreSQL it lets
	// several instances delete disjoint rows at once.
	skipLocked() string
	// forUpdate ends a SELECT whose row the transaction will change, so
	// that concurrent transactions take turns on it.
	forUpdate() string
	// tryLock takes a lock held until tx ends, named by the text that
	// keySQL (a SQL expression over args) evaluates to, and reports
	// whether it got it; it does not wait for another holder.
	tryLock(ctx context.Context, tx *sql.Tx, keySQL string, args ...any) (bool, error)
	// lock is tryLock that waits for another holder to end.
	lock(ctx context.Context, tx *sql.Tx, keySQL string, args ...any) error
	// idIn is a condition that column is one of ids, with args to append
	// to the statement's; param is the placeholder number it may use.
	idIn(column string, ids []int64, param int) (cond string, args []any)
	// withDeadline selects the beets that have a deadline (the up ones)
	// through the deadline index alone.
	withDeadline() string
	// dueIndexed narrows "due_at <= $1" to the deadline index.
	dueIndexed() string
	// addEvents is AddEvents' commit: it reads the group's beets (ids and
	// toks sorted and unique), lets applyEvents decide what the events do
	// to them, and writes back in one transaction the beets that got
	// events (touched, in ID order), their flips and the events, returning
	// the versions it read. Unless synced, SQLite's leaves its fsync to
	// SyncEvents; PostgreSQL's is always synced.
	addEvents(ctx context.Context, db *DB, events []beet.Event, observe beet.Observer, ids []int64, toks []string, synced bool) (
		touched []*beet.Beet, versions map[int64]int64, err error)
	// findDue and applyDue are FindDueBeets and ApplyDue.
	findDue(ctx context.Context, db *DB, t time.Time, limit int) ([]*beet.Beet, error)
	applyDue(ctx context.Context, db *DB, changes []beet.DueChange) error
	// partitionsEvents reports whether events sit in monthly partitions
	// that can be dropped whole.
	partitionsEvents() bool
	// sealSecrets runs write, which overwrites plain channel secrets in
	// channels, so that the old values do not stay behind in the
	// database's files; it tells log when it could not make sure of that
	// but the secrets are sealed.
	sealSecrets(ctx context.Context, conn *sql.Conn, log *slog.Logger, write func() error) error
	// versionTableSQL answers one boolean: does goose's table exist?
	versionTableSQL() string
	isUnique(err error) bool
	isForeignKey(err error) bool
	// lowerName lower-cases the name column in every alphabet, for
	// searching and sorting by name: SQLite's LOWER folds only A-Z.
	lowerName() string
}

type sqliteDialect struct{}

func (sqliteDialect) name() string      { return "sqlite" }
func (sqliteDialect) lowerName() string { return "unicode_lower(name)" }

// unicode_lower is LOWER for every alphabet (strings.ToLower), on every
// SQLite connection: "Übersicht" and "Оплата" are found by "übersicht"
// and "оплата" as they are on PostgreSQL.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("unicode_lower", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		}
		return args[0], nil
	})
}
func (sqliteDialect) goose() goose.Dialect  { return goose.DialectSQLite3 }
func (sqliteDialect) migrationsDir() string { return "migrations/sqlite" }

func (sqliteDialect) migrationLocker(context.Context, querier) (goose.ProviderOption, error) {
	return nil, nil
}

func (sqliteDialect) skipLocked() string { return "" }
func (sqliteDialect) forUpdate() string  { return "" }
func (sqliteDialect) tryLock(context.Context, *sql.Tx, string, ...any) (bool, error) {
	return true, nil
}
func (sqliteDialect) lock(context.Context, *sql.Tx, string, ...any) error { return nil }

// idIn writes the IDs as SQL integer literals (they are int64s, never text):
// SQLite has no array parameter.
func (sqliteDialect) idIn(column string, ids []int64, _ int) (string, []any) {
	b := make([]byte, 0, len(column)+5+len(ids)*8)
	b = append(b, column...)
	b = append(b, " IN ("...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ')')), nil
}

func (sqliteDialect) withDeadline() string   { return "due_at IS NOT NULL" }
func (sqliteDialect) dueIndexed() string     { return "" }
func (sqliteDialect) partitionsEvents() bool { return false }
func (sqliteDialect) addEvents(ctx context.Context, db *DB, events []beet.Event, observe beet.Observer, ids []int64, toks []string, synced bool) (
	[]*beet.Beet, map[int64]int64, error) {
	return db.addEventsSQLite(ctx, events, observe, ids, toks, synced)
}
func (sqliteDialect) findDue(ctx context.Context, db *DB, t time.Time, limit int) ([]*beet.Beet, error) {
	return db.findDueSQLite(ctx, t, limit)
}
func (sqliteDialect) applyDue(ctx context.Context, db *DB, changes []beet.DueChange) error {
	return db.applyDueSQLite(ctx, changes)
}

// sealSecrets has SQLite zero what it frees, then copies the sealed pages
// into the main file and empties the WAL, which held the old ones.
func (sqliteDialect) sealSecrets(ctx context.Context, conn *sql.Conn, log *slog.Logger, write func() error) error {
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`)
	if err := write(); err != nil {
		return err
	}
	return truncateWAL(ctx, conn, log)
}

// truncateWALFor bounds how long truncateWAL waits for the checkpoint lock.
const truncateWALFor = 10 * time.Second

// truncateWAL copies the whole WAL into the database file and empties it.
// SQLite answers busy at once, without its busy handler, while another
// connection checkpoints (the checkpointer does every checkpointEvery), and
// reports it in the result row, not as an error: so it is read and the
// checkpoint tried again. If the lock never comes, the rows are sealed all
// the same and the old pages stay in the WAL until it is written over.
func truncateWAL(ctx context.Context, conn *sql.Conn, log *slog.Logger) error {
	deadline := time.Now().Add(truncateWALFor)
	for {
		busy, _, err := walCheckpoint(ctx, conn, "TRUNCATE")
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			log.Warn("WAL not emptied after sealing channel secrets: another connection kept it busy; the old values stay in the WAL until it is written over",
				"waited", truncateWALFor)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (sqliteDialect) isUnique(err error) bool {
	return sqliteCode(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
func (sqliteDialect) isForeignKey(err error) bool {
	return sqliteCode(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY)
}
func (sqliteDialect) versionTableSQL() string {
	return `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version')`
}

// sqliteCode reports whether err carries one of the extended result codes.
func sqliteCode(err error, codes ...int) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, c := range codes {
		if e.Code() == c {
			return true
		}
	}
	return false
}

type postgresDialect struct{}

func (postgresDialect) name() string          { return "postgres" }
func (postgresDialect) lowerName() string     { return "LOWER(name)" }
func (postgresDialect) goose() goose.Dialect  { return goose.DialectPostgres }
func (postgresDialect) migrationsDir() string { return "migrations/postgres" }

// migrationLocker takes a session advisory lock around the run. Its ID is
// derived from the database and schema, so separate schemas (tests,
// tenants) do not wait for each other.
func (postgresDialect) migrationLocker(ctx context.Context, q querier) (goose.ProviderOption, error) {
	var database, schema string
	if err := q.QueryRowContext(ctx, `SELECT current_database(), current_schema()`).Scan(&database, &schema); err != nil {
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte("beet migrations " + database + "." + schema))
	// Poll every second for up to 5 minutes; goose's default period
	// of 5 s makes every waiting instance start 5 s late.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64())), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, err
	}
	return goose.WithSessionLocker(locker), nil
}

func (postgresDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }
func (postgresDialect) forUpdate() string  { return " FOR UPDATE" }

// tryLock takes a transaction advisory lock on the key's hash.
func (postgresDialect) tryLock(ctx context.Context, tx *sql.Tx, keySQL string, args ...any) (bool, error) {
	var locked bool
	err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended(`+keySQL+`, 0))`, args...).Scan(&locked)
	return locked, err
}

// lock takes a transaction advisory lock on the key's hash, waiting for it.
func (postgresDialect) lock(ctx context.Context, tx *sql.Tx, keySQL string, args ...any) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(`+keySQL+`, 0))`, args...)
	return err
}

func (postgresDialect) idIn(column string, ids []int64, param int) (string, []any) {
	return column + " = ANY($" + strconv.Itoa(param) + "::bigint[])", []any{ids}
}

// The deadline index is on wake_at, set exactly when due_at is and never
// past it (00016).
func (postgresDialect) withDeadline() string   { return "wake_at IS NOT NULL" }
func (postgresDialect) dueIndexed() string     { return " AND wake_at <= $1" }
func (postgresDialect) partitionsEvents() bool { return true }
func (postgresDialect) addEvents(ctx context.Context, db *DB, events []beet.Event, observe beet.Observer, ids []int64, toks []string, _ bool) (
	[]*beet.Beet, map[int64]int64, error) {
	return db.addEventsPG(ctx, events, observe, ids, toks)
}
func (postgresDialect) findDue(ctx context.Context, db *DB, t time.Time, limit int) ([]*beet.Beet, error) {
	return db.findDuePG(ctx, t, limit)
}
func (postgresDialect) applyDue(ctx context.Context, db *DB, changes []beet.DueChange) error {
	return db.applyDuePG(ctx, changes)
}

// sealSecrets rewrites the table after write: the old row versions keep
// the plain text until then. The table is small (a few rows per account).
func (postgresDialect) sealSecrets(ctx context.Context, conn *sql.Conn, log *slog.Logger, write func() error) error {
	if err := write(); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `VACUUM FULL channels`); err != nil {
		log.Warn("channel secrets sealed, but VACUUM FULL channels failed: old row versions may keep plain secrets until it runs", "err", err)
	}
	return nil
}
func (postgresDialect) isUnique(err error) bool {
	return pgCode(err, "23505") // unique_violation
}
func (postgresDialect) isForeignKey(err error) bool {
	return pgCode(err, "23503") // foreign_key_violation
}
func (postgresDialect) versionTableSQL() string {
	// to_regclass follows search_path, as goose's own queries do.
	return `SELECT to_regclass('goose_db_version') IS NOT NULL`
}

func pgCode(err error, code string) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == code
}

// migrationsFS returns d's migration files with the .sql files at the root,
// as goose expects.
func migrationsFS(d dialect) (fs.FS, error) {
	return fs.Sub(migrations, d.migrationsDir())
}
