package sqlstore_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/sqlstore/storetest"
	"github.com/beethq/beet/internal/testdb"
)

// pgEnv names the PostgreSQL server the PostgreSQL tests run against.
const pgEnv = "BEET_TEST_POSTGRES_URL"

// openSQLite opens an unmigrated store on a fresh file in a temp dir.
func openSQLite(tb testing.TB) *sqlstore.DB {
	return testdb.OpenUnmigrated(tb, testdb.URL(tb, "sqlite"))
}

// pgSchemaURL is a URL into a fresh PostgreSQL schema of the test's own
// (see testdb.URL); it skips the test when BEET_TEST_POSTGRES_URL is unset.
func pgSchemaURL(tb testing.TB) string { return testdb.URL(tb, "postgres") }

func openPostgres(tb testing.TB) *sqlstore.DB { return testdb.OpenUnmigrated(tb, pgSchemaURL(tb)) }

func migrated(tb testing.TB, db *sqlstore.DB) *sqlstore.DB {
	tb.Helper()
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return db
}

// engines lists the engines with an opener of a fresh, unmigrated store.
var engines = []struct {
	name string
	open func(testing.TB) *sqlstore.DB
}{
	{"sqlite", openSQLite},
	{"postgres", openPostgres},
}

func TestConformance(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if e.name == "postgres" && os.Getenv(pgEnv) == "" {
				t.Skipf("PostgreSQL conformance tests skipped: %s is unset", pgEnv)
			}
			storetest.Run(t, func(t *testing.T) beet.Store { return migrated(t, e.open(t)) })
		})
	}
}

func TestEngine(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if got := e.open(t).Engine(); got != e.name {
				t.Errorf("Engine() = %q, want %q", got, e.name)
			}
		})
	}
}

func TestMigrate(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := e.open(t)
			if ok, err := db.SchemaCurrent(ctx); err != nil || ok {
				t.Fatalf("SchemaCurrent before Migrate = %v, %v; want false", ok, err)
			}
			// SchemaCurrent must only look: the schema stays unmigrated.
			if ok, err := db.SchemaCurrent(ctx); err != nil || ok {
				t.Fatalf("SchemaCurrent, asked twice = %v, %v; want false", ok, err)
			}
			migrated(t, db)
			if ok, err := db.SchemaCurrent(ctx); err != nil || !ok {
				t.Fatalf("SchemaCurrent after Migrate = %v, %v; want true", ok, err)
			}
			// Data survives a second Migrate, which must do nothing.
			a := &beet.Account{Plan: beet.PlanFree}
			if err := db.CreateAccount(ctx, a, &beet.User{Email: "m@example.com"}); err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
			if _, err := db.FindAccountByID(ctx, a.ID); err != nil {
				t.Fatalf("after second Migrate: %v", err)
			}
		})
	}
}

// TestMigrateConcurrent starts four instances on one empty schema at once,
// as a rolling deploy might; the advisory lock must let exactly one apply
// each migration and the others find nothing to do.
func TestMigrateConcurrent(t *testing.T) {
	u := pgSchemaURL(t)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		db, err := sqlstore.Open(ctx, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		wg.Go(func() { errs <- db.Migrate(ctx) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate: %v", err)
		}
	}
	db := openPostgresAt(t, u)
	if ok, err := db.SchemaCurrent(ctx); err != nil || !ok {
		t.Fatalf("SchemaCurrent after concurrent Migrate = %v, %v; want true", ok, err)
	}
}

func openPostgresAt(tb testing.TB, u string) *sqlstore.DB { return testdb.OpenUnmigrated(tb, u) }

func TestOpenBadURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", "unsupported"},
		{"mysql://root:secret@localhost/beet", "unsupported URL scheme \"mysql\""},
		{"/var/lib/beet.db", "unsupported"},
		{"sqlite:", "names no file"},
		{"sqlite://", "names no file"},
		{"sqlite::memory:", "not a file path"},
		{"sqlite:beet.db?_pragma=foo", "query parameters"},
	} {
		db, err := sqlstore.Open(t.Context(), tc.url, nil)
		if err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded, want an error", tc.url)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", tc.url, err, tc.want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error shows the password: %v", tc.url, err)
		}
	}
	if _, err := sqlstore.Open(t.Context(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", nil); err == nil {
		t.Error("Open on a closed port succeeded, want an error")
	}
}

// TestOpenPostgresThatNeverAnswers: a server that takes the TCP
// connection and never answers fails Open within the connect timeout, the
// default one or the URL's connect_timeout, with a reason, instead of
// hanging the start for ever.
func TestOpenPostgresThatNeverAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	restore := sqlstore.SetPGConnectTimeoutForTest(500 * time.Millisecond)
	defer restore()
	base := "postgres://beet@" + ln.Addr().String() + "/beet?sslmode=disable"
	for _, tc := range []struct {
		url  string
		most time.Duration
	}{
		{base, 5 * time.Second},                        // the default (lowered here)
		{base + "&connect_timeout=1", 5 * time.Second}, // the URL's own
	} {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := sqlstore.Open(context.Background(), tc.url, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "did not answer within") {
				t.Errorf("Open(%s) = %v, want: the server did not answer within …", tc.url, err)
			}
			if took := time.Since(start); took > tc.most {
				t.Errorf("Open(%s) took %s", tc.url, took)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Open(%s) still hangs after 20 s", tc.url)
		}
	}
}

// TestOpenSQLitePaths checks the three spellings of a SQLite URL and that
// Open creates missing parent directories.
func TestOpenSQLitePaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct{ url, file string }{
		{"sqlite://" + filepath.Join(dir, "abs", "a.db"), filepath.Join(dir, "abs", "a.db")},
		{"sqlite://rel/b.db", filepath.Join(dir, "rel", "b.db")},
		{"sqlite:c.db", filepath.Join(dir, "c.db")},
	} {
		db, err := sqlstore.Open(t.Context(), tc.url, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.url, err)
		}
		err = db.Migrate(t.Context())
		db.Close()
		if err != nil {
			t.Fatalf("Migrate(%q): %v", tc.url, err)
		}
		if _, err := os.Stat(tc.file); err != nil {
			t.Errorf("Open(%q) did not create %s: %v", tc.url, tc.file, err)
		}
	}
}
