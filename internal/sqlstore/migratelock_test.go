package sqlstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/beethq/beet/internal/testdb"
)

// TestConcurrentMigrationsOfANewSQLiteFile runs two migrations of one new
// SQLite file at once, as two `beet migrate` (or a `serve` and an
// `accounts create`) started together do, many times: each must succeed,
// and the second find nothing to do.
func TestConcurrentMigrationsOfANewSQLiteFile(t *testing.T) {
	tries := 20
	if testing.Short() {
		tries = 5
	}
	ctx := context.Background()
	for range tries {
		url := testdb.URL(t, "sqlite")
		a := testdb.OpenUnmigrated(t, url)
		b := testdb.OpenUnmigrated(t, url)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, db := range []interface{ Migrate(context.Context) error }{a, b} {
			wg.Go(func() { errs[i] = db.Migrate(ctx) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("concurrent migration: %v", err)
			}
		}
		if ok, err := a.SchemaCurrent(ctx); err != nil || !ok {
			t.Fatalf("schema current after both: %v %v", ok, err)
		}
	}
}
