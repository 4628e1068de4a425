// Package sqlstore implements the beet store interfaces on SQLite (pure-Go
// modernc.org/sqlite) and PostgreSQL (pgx through database/sql).
//
// Both engines run the same SQL text: modernc binds PostgreSQL-style $1
// placeholders, timestamps are BIGINT Unix microseconds, and a small dialect
// covers the rest (DDL lives in per-engine migrations, row locking, error
// classification). Only exported methods begin, commit or roll back
// transactions; unexported helpers take (ctx, q) and never do.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" driver
	_ "modernc.org/sqlite"           // registers the "sqlite" driver

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/secretbox"
)

// DB is a Beet store on SQLite or PostgreSQL. It is safe for concurrent use.
type DB struct {
	// write takes every write and write transaction. On SQLite it holds a
	// single connection, so writers queue in Go instead of spinning on
	// SQLITE_BUSY; on PostgreSQL it is the only pool and read == write.
	write *sql.DB
	read  *sql.DB
	d     dialect
	log   *slog.Logger
	stmts stmtCache

	// ingest is AddEvents' own pool on PostgreSQL (nil on SQLite), whose
	// sessions plan with generic plans (openPostgres).
	ingest *sql.DB

	eventsMu sync.Mutex
	events   *eventWrites // AddEvents' statements, once all are prepared
	beets    *beetCache   // the beets AddEvents wrote, by row version
	owner    string       // SQLite: this store's name in ingest_owner (see lockBeets)
	// pgStale counts PostgreSQL commits whose cached beets had changed, so
	// they took the locked path (tests).
	pgStale atomic.Int64
	// pgLockedOnly turns the cached path off (benchmarks compare the two).
	pgLockedOnly bool

	file    string             // SQLite: the database file's absolute path
	ckpt    *checkpointer      // SQLite: checkpoints the WAL off the commit path
	wal     *walSync           // SQLite on Linux: fsyncs the WAL after AddEventsUnsynced's commits
	secrets *secretbox.Keyring // seals channel secrets at rest; nil stores them as given (secrets.go)
}

var _ beet.Store = (*DB)(nil)

// querier is what helpers run SQL through: a pool or a transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open connects to the database named by databaseURL:
//
//	sqlite:///abs/path/beet.db   an absolute path
//	sqlite://beet.db, sqlite:beet.db   relative to the working directory
//	postgres://… or postgresql://…   a pgx connection string
//
// Open does not migrate; call Migrate. A nil log discards log output.
func Open(ctx context.Context, databaseURL string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch {
	case strings.HasPrefix(databaseURL, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(databaseURL, "sqlite:"), log)
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		return openPostgres(ctx, databaseURL, log)
	}
	// Show only the scheme: the rest of a URL may hold a password.
	scheme, _, ok := strings.Cut(databaseURL, ":")
	if !ok || databaseURL == "" {
		scheme = "(none)"
	}
	return nil, fmt.Errorf("open database: unsupported URL scheme %q: want sqlite:///abs/path.db, sqlite:relative.db or postgres://…", scheme)
}

// CheckURL reports what Open would refuse in a database URL without
// opening anything, so that `beet config check` and `serve` agree: a
// sqlite: URL must name a file and take no query; a postgres:// URL must
// parse (sslmode and the other parameters included) and name its host and
// database, as libpq's defaults (the local socket, a database named after
// the user) would quietly pick another one. Errors never show a password.
func CheckURL(databaseURL string) error {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite:"):
		_, err := sqliteFile(strings.TrimPrefix(databaseURL, "sqlite:"))
		return err
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		return checkPostgresURL(databaseURL)
	}
	return errors.New("unsupported URL scheme: want sqlite:///abs/path.db, sqlite:relative.db or postgres://…")
}

func checkPostgresURL(raw string) error {
	if _, err := pgx.ParseConfig(raw); err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			return fmt.Errorf("not a usable PostgreSQL URL: %w", pe.Unwrap())
		}
		return errors.New("not a usable PostgreSQL URL")
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return errors.New("not a usable PostgreSQL URL")
	}
	q := u.Query()
	if u.Hostname() == "" && q.Get("host") == "" {
		return errors.New("the URL names no host: postgres://user:pass@host/database")
	}
	if strings.Trim(u.Path, "/") == "" && q.Get("dbname") == "" {
		return errors.New("the URL names no database: postgres://user:pass@host/database")
	}
	return nil
}

// sqliteDSN builds a modernc DSN for path. busy_timeout comes first so that
// the pragmas after it already wait for a lock instead of failing at once.
func sqliteDSN(path string, writer bool) string {
	p := []string{"_pragma=busy_timeout(10000)"}
	if writer {
		// journal_mode is persistent in the file; only the writer sets it.
		p = append(p, "_pragma=journal_mode(WAL)")
	}
	p = append(p, "_pragma=foreign_keys(1)")
	if writer {
		// FULL fsyncs the WAL at every commit, so an acknowledged event
		// survives power loss, not only a crash (NORMAL may lose the last
		// commits). Ingestion commits in groups, so it pays one fsync per
		// group rather than per event; AddEventsUnsynced switches to NORMAL
		// for its own commits and back, and walSync fsyncs after them.
		p = append(p, "_pragma=synchronous(FULL)")
		// The writer checkpoints the WAL itself only past walBoundPages:
		// see checkpointer.
		p = append(p, "_pragma=wal_autocheckpoint("+strconv.Itoa(walBoundPages)+")")
		// BEGIN IMMEDIATE takes the write lock up front, so a transaction
		// never fails half-way when it upgrades from reading to writing.
		p = append(p, "_txlock=immediate")
	} else {
		p = append(p, "_pragma=query_only(1)")
	}
	return "file:" + path + "?" + strings.Join(p, "&")
}

// checkSQLiteFile turns the usual ways a database file cannot be used
// into one clear sentence naming the file, before SQLite answers with
// "unable to open database file (14)".
func checkSQLiteFile(abs string) error {
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // created on open
	case err != nil:
		return fmt.Errorf("cannot reach the database file %s: %w", abs, err)
	case st.IsDir():
		return fmt.Errorf("the database path %s is a directory, not a database file", abs)
	}
	f, err := os.OpenFile(abs, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("cannot read and write the database file %s: permission denied (run Beet as the user that owns it)", abs)
		}
		return fmt.Errorf("cannot open the database file %s: %w", abs, err)
	}
	return f.Close()
}

func openSQLite(ctx context.Context, path string, log *slog.Logger) (*DB, error) {
	abs, err := sqliteFile(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	if err := checkSQLiteFile(abs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("open sqlite: create directory: %w", err)
	}
	write, err := sql.Open("sqlite", sqliteDSN(abs, true))
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	// Ping the writer before the reader opens: it creates the file and
	// switches it to WAL, which the query_only readers cannot do.
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		if strings.Contains(err.Error(), "file is not a database") {
			return nil, fmt.Errorf("%s is not an SQLite database (damaged, or another kind of file): %w", abs, err)
		}
		return nil, fmt.Errorf("open sqlite %s: %w", abs, err)
	}
	read, err := sql.Open("sqlite", sqliteDSN(abs, false))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	n := max(4, runtime.NumCPU())
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(5 * time.Minute)
	if err := read.PingContext(ctx); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", abs, err)
	}
	ckpt, err := startCheckpointer(abs, log)
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", abs, err)
	}
	log.Info("database opened", "engine", "sqlite", "path", abs)
	return &DB{write: write, read: read, d: sqliteDialect{}, log: log, beets: newBeetCache(beetCacheSize), file: abs, ckpt: ckpt,
		wal: newWALSync(abs), owner: rand.Text()}, nil
}

func openPostgres(ctx context.Context, url string, log *slog.Logger) (*DB, error) {
	db, cfg, err := newPostgres(url, log)
	if err != nil {
		return nil, err
	}
	if err := db.write.PingContext(ctx); err != nil {
		db.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("open postgres: the server did not answer within %s (connect_timeout in the URL sets it): %w", cfg.ConnectTimeout, err)
		}
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	log.Info("database opened", "engine", "postgres")
	return db, nil
}

// OpenPostgresUnconnected is Open for a postgres:// URL without a
// connection: the pools dial when first used, so the server may be down.
// An ingest instance that cannot reach its database at start opens its
// store so, and spools pings until the database answers (internal/app).
// Call Migrate before anything else uses it.
func OpenPostgresUnconnected(databaseURL string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, _, err := newPostgres(databaseURL, log)
	return db, err
}

// newPostgres makes a PostgreSQL store's pools, which connect on demand.
func newPostgres(url string, log *slog.Logger) (*DB, *pgx.ConnConfig, error) {
	if err := checkPostgresURL(url); err != nil {
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	cfg, err := pgConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	ingest, err := openPGIngest(url)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	return &DB{write: db, read: db, ingest: ingest, d: postgresDialect{}, log: log, beets: newBeetCache(beetCacheSize)}, cfg, nil
}

// pgConnectTimeout bounds each new connection (dial, TLS, start-up and
// authentication) when the URL sets no connect_timeout: a server that takes
// the TCP connection and never answers would otherwise hang the start for
// ever, and every request that needs a new connection with it.
var pgConnectTimeout = 10 * time.Second

// pgConfig parses a postgres:// URL, with pgConnectTimeout unless the URL
// sets connect_timeout itself (in seconds; 0 waits for ever, as in libpq).
func pgConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 && !strings.Contains(url, "connect_timeout=") { // =0 waits, as in libpq
		cfg.ConnectTimeout = pgConnectTimeout
	}
	return cfg, nil
}

// openPGIngest opens AddEvents' pool. Its statements take arrays, whose
// length a custom plan would be fitted to, so PostgreSQL planned them
// again on every commit (a quarter of a commit's CPU, in a profile of
// BenchmarkPGCommit); one generic plan per statement and session serves
// every length. The rest of the store keeps the usual choice.
func openPGIngest(url string) (*sql.DB, error) {
	cfg, err := pgConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// Engine returns "sqlite" or "postgres".
func (db *DB) Engine() string { return db.d.name() }

// PartitionsEvents reports whether the events table has monthly
// partitions, which EnsureEventPartitions keeps made ahead (PostgreSQL).
func (db *DB) PartitionsEvents() bool { return db.d.partitionsEvents() }

// Close closes the connection pools.
func (db *DB) Close() error {
	db.stmts.close()
	var err error
	if db.ckpt != nil {
		err = db.ckpt.close()
	}
	if db.wal != nil {
		err = errors.Join(err, db.wal.close())
	}
	err = errors.Join(err, db.write.Close())
	if db.ingest != nil {
		err = errors.Join(err, db.ingest.Close())
	}
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Ping checks that the database answers, on both pools.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if db.read != db.write {
		if err := db.read.PingContext(ctx); err != nil {
			return fmt.Errorf("ping read pool: %w", err)
		}
	}
	return nil
}

// inTx runs fn in a write transaction and commits it if fn returns nil.
// It serves the exported methods; helpers never begin transactions.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return txOn(ctx, db.write, fn)
}

// txBeginner is a pool or one connection of it.
type txBeginner interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}

// txOn is inTx on a given pool or connection.
func txOn(ctx context.Context, on txBeginner, fn func(tx *sql.Tx) error) error {
	tx, err := on.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // fn's error is the one worth reporting
		return err
	}
	return tx.Commit()
}

// toMicros and fromMicros convert between time.Time and the stored Unix
// microseconds; what comes back is always UTC.
func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(*t), Valid: true}
}

// stamp returns t cut to the stored precision in UTC, or now if t is zero,
// so that what a caller holds after a write equals what a read returns.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

func nullFloat(f *float64) sql.NullFloat64 {
	if f == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *f, Valid: true}
}

func fromNullFloat(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}

// pageLimit applies the default and the cap to a requested page size.
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return beet.DefaultPageLimit
	case n > beet.MaxPageLimit:
		return beet.MaxPageLimit
	}
	return n
}

// notFound turns sql.ErrNoRows into an ENOTFOUND error naming what was
// missing, and passes other errors through.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return beet.Errorf(beet.ENOTFOUND, format, args...)
	}
	return err
}

// rowsAffected returns the row count of res, or an error.
func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scanIDs reads a one-column result of IDs; never nil on success.
func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
