package sqlstore

import (
	"context"
	"os"
	"time"
)

// ExecForTest runs one statement on the write pool: benchmarks seed
// millions of rows with it in one statement.
func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}

// MigrateBeforeForTest applies the migrations numbered below version.
func (db *DB) MigrateBeforeForTest(ctx context.Context, version int64) error {
	p, err := db.provider(ctx, false)
	if err != nil {
		return err
	}
	var last int64
	for _, s := range p.ListSources() {
		if s.Version < version && s.Version > last {
			last = s.Version
		}
	}
	_, err = p.UpTo(ctx, last)
	return err
}

// PGStaleForTest counts PostgreSQL commits whose cached beets had changed.
func (db *DB) PGStaleForTest() int64 { return db.pgStale.Load() }

// SetPGLockedOnlyForTest turns PostgreSQL's cached commit path off or on.
func (db *DB) SetPGLockedOnlyForTest(on bool) { db.pgLockedOnly = on }

// ReadForTest returns the int64 first column of a query's rows.
func (db *DB) ReadForTest(ctx context.Context, query string) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// SetSyncHookForTest runs hook before each fsync of SyncEvents; an error
// it returns is taken as the fsync's.
func (db *DB) SetSyncHookForTest(hook func() error) {
	db.wal.mu.Lock()
	defer db.wal.mu.Unlock()
	db.wal.beforeSync = hook
}

// SyncedFileForTest is the file SyncEvents last fsynced, or nil.
func (db *DB) SyncedFileForTest() os.FileInfo {
	db.wal.mu.Lock()
	defer db.wal.mu.Unlock()
	if db.wal.f == nil {
		return nil
	}
	fi, _ := db.wal.f.Stat()
	return fi
}

// WriteSynchronousForTest is PRAGMA synchronous on the write connection.
func (db *DB) WriteSynchronousForTest(ctx context.Context) (int64, error) {
	var v int64
	err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v)
	return v, err
}

// SetPGConnectTimeoutForTest lowers the default connect timeout and
// returns a function that restores it.
func SetPGConnectTimeoutForTest(d time.Duration) (restore func()) {
	old := pgConnectTimeout
	pgConnectTimeout = d
	return func() { pgConnectTimeout = old }
}
