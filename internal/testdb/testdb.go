// Package testdb opens real, migrated stores for tests in any package:
// SQLite on a temp file always, PostgreSQL in a schema of its own per test
// when BEET_TEST_POSTGRES_URL is set (and a skip that says so when not).
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/beethq/beet/internal/sqlstore"
)

// PostgresEnv names the PostgreSQL server tests run against.
const PostgresEnv = "BEET_TEST_POSTGRES_URL"

// Engines are the store engines tests run on.
var Engines = []string{"sqlite", "postgres"}

// URL returns a database URL of a fresh, empty database on engine: a temp
// SQLite file, or a new PostgreSQL schema dropped when the test ends.
func URL(tb testing.TB, engine string) string {
	tb.Helper()
	if engine == "sqlite" {
		return "sqlite://" + filepath.Join(tb.TempDir(), "beet.db")
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		tb.Skipf("PostgreSQL test skipped: %s is unset", PostgresEnv)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "beet_t_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(context.Background(), `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		// Cleanups run last-in first-out: stores on the schema are closed by now.
		if err := dropSchema(admin, schema); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema) // pgx sends unknown parameters as runtime params
	u.RawQuery = q.Encode()
	return u.String()
}

// dropSchema drops a test's schema, again if PostgreSQL picked it as a
// deadlock's victim: packages' tests run in parallel, and two DROP SCHEMA
// … CASCADE lock catalog rows in their own orders (CI failed on one).
func dropSchema(admin *sql.DB, schema string) error {
	var err error
	for attempt := range 5 {
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
		_, err = admin.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40P01" {
			return err
		}
	}
	return err
}

// OpenUnmigrated opens a store at databaseURL as it is, closed when the
// test ends.
func OpenUnmigrated(tb testing.TB, databaseURL string) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.Open(context.Background(), databaseURL, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Open opens and migrates a store at databaseURL, closed when the test ends.
func Open(tb testing.TB, databaseURL string) *sqlstore.DB {
	tb.Helper()
	db := OpenUnmigrated(tb, databaseURL)
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return db
}

// New opens a fresh, migrated store on engine.
func New(tb testing.TB, engine string) *sqlstore.DB {
	tb.Helper()
	return Open(tb, URL(tb, engine))
}

// Each runs fn as a subtest on every engine.
func Each(t *testing.T, fn func(t *testing.T, engine string)) {
	for _, e := range Engines {
		t.Run(e, func(t *testing.T) { fn(t, e) })
	}
}
