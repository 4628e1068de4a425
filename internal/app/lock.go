package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/lockfile"
)

// lock makes this process the only `beet serve` on its SQLite file and on
// its spool: a lock file beside each (flock, released by the kernel when
// the process ends, however it ends). A second instance exits at once,
// naming the file and the holder's PID. Two servers on one SQLite file
// would each run the outbox and the sweeper, and two on one spool would
// replay each other's events. PostgreSQL needs no lock: its instances share
// the database by design and each has its own spool.
func (a *App) lock(cfg config.Config) error {
	var paths []string
	if db, ok := sqlitePath(cfg.DatabaseURL); ok {
		paths = append(paths, db)
	}
	if cfg.RunsHTTP() { // only ingestion uses the spool
		paths = append(paths, spoolPath(cfg))
	}
	seen := map[string]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if seen[abs] {
			// Else the second lock finds the first, held by this very process.
			return fmt.Errorf("BEET_SPOOL_PATH is the database file %s: give the spool a file of its own", abs)
		}
		seen[abs] = true
		l, err := lockfile.Acquire(abs + ".lock")
		var held *lockfile.HeldError
		if errors.As(err, &held) {
			who := "another process"
			if held.PID > 0 {
				who = fmt.Sprintf("another beet (pid %d)", held.PID)
			}
			return fmt.Errorf("%s is in use by %s: one file, one instance (lock file %s)", abs, who, held.Path)
		} else if err != nil {
			return err
		}
		a.onStop("lock "+filepath.Base(abs), func(context.Context) error { return l.Release() })
	}
	return nil
}

// sqlitePath is the file a sqlite: URL names, as sqlstore.Open reads it.
func sqlitePath(url string) (string, bool) {
	rest, ok := strings.CutPrefix(url, "sqlite:")
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, "//"), true
}
