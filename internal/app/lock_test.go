//go:build unix

package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/app"
)

// TestSymlinkDoesNotBypassTheLock opens a second app on the first one's
// SQLite file, and on its spool, through a symlink: the lock is taken on
// the file the symlink names, so the second is refused. The symlink made
// before the file exists counts too.
func TestSymlinkDoesNotBypassTheLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(real, "b.db")
	// alias.db points at b.db before b.db exists; the first app opens
	// through the alias, the second by the real name.
	if err := os.Symlink(db, filepath.Join(dir, "alias.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(db+".spool", filepath.Join(dir, "alias.spool")); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.DatabaseURL = "sqlite://" + filepath.Join(dir, "alias.db")
	cfg.SpoolPath = filepath.Join(dir, "alias.spool")
	first, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(ctx)

	for _, c := range []struct{ name, db, spool string }{
		{"database by its real name", db, filepath.Join(dir, "other.spool")},
		{"spool by its real name", filepath.Join(dir, "other.db"), db + ".spool"},
	} {
		cfg := testConfig(t)
		cfg.DatabaseURL = "sqlite://" + c.db
		cfg.SpoolPath = c.spool
		second, err := app.New(ctx, cfg, app.Options{})
		if err == nil {
			second.Stop(ctx)
			t.Errorf("%s: a second app opened the first one's file", c.name)
			continue
		}
		if !strings.Contains(err.Error(), "is in use by another beet") {
			t.Errorf("%s: %v, want a refusal naming the holder", c.name, err)
		}
	}
}
