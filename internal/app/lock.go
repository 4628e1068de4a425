package app

import (
	"context"
	"errors"
	"fmt"
	"os"
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
		abs, err := realPath(p)
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

// realPath is the file p names once every symlink is followed, so that
// the lock is the same whichever name a process opens the file by (SQLite
// follows a symlink to the database file, and shares its WAL). A missing
// file is created first, empty (SQLite takes an empty file for a new
// database; the spool creates its file anyway), so that a symlink whose
// target does not exist yet resolves too. A hard link is another name the
// kernel does not tell apart: it is not caught (docs/OPERATIONS.md).
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		// Where the file cannot be made (no such directory), the lock
		// beside it fails with the reason.
		if f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
			f.Close()
		}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}
