package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBackupPostgres says that BackupSQLite was given a PostgreSQL URL:
// PostgreSQL is copied with its own tools (PostgresDumpCommand).
var ErrBackupPostgres = errors.New("PostgreSQL is backed up with pg_dump, not beet backup")

// BackupReport describes a finished, verified backup.
type BackupReport struct {
	Path          string `json:"path"`
	Bytes         int64  `json:"bytes"`
	SchemaVersion int64  `json:"schema_version"`
	Beets         int64  `json:"beets"`
	Events        int64  `json:"events"`
	Integrity     string `json:"integrity"`
}

// PostgresDumpCommand is the documented backup of a PostgreSQL store: a
// custom-format dump, which pg_restore reads (in parallel, and table by
// table if need be). It names the variable rather than its value, so the
// line never shows a password.
func PostgresDumpCommand(output string) string {
	return fmt.Sprintf(`pg_dump --format=custom --no-owner --file=%s "$BEET_DATABASE_URL"`, shellQuote(output))
}

// BackupSQLite writes a consistent copy of the SQLite database that
// databaseURL names to dest, while other processes (beet serve) keep
// reading and writing it.
//
// VACUUM INTO copies one snapshot: it runs in a read transaction, which in
// WAL mode never blocks the writer, and the copy holds every transaction
// committed before it began and none after. It writes beside dest first;
// only a copy that opens and passes PRAGMA integrity_check is renamed to
// dest, so a failed backup never leaves a file that looks like one.
func BackupSQLite(ctx context.Context, databaseURL, dest string) (*BackupReport, error) {
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		return nil, ErrBackupPostgres
	}
	if !strings.HasPrefix(databaseURL, "sqlite:") {
		return nil, fmt.Errorf("backup: BEET_DATABASE_URL is neither sqlite: nor postgres://")
	}
	src, err := sqliteFile(strings.TrimPrefix(databaseURL, "sqlite:"))
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Stat(src); err != nil {
		// mode=ro below would fail too, but less clearly; and it must
		// never create an empty database where the user expected theirs.
		return nil, fmt.Errorf("backup: database %s: %w", src, err)
	}
	dest, err = filepath.Abs(dest)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if dest == src {
		return nil, fmt.Errorf("backup: --output is the database itself (%s)", src)
	}
	if _, err := os.Stat(dest); err == nil {
		return nil, fmt.Errorf("backup: %s already exists; choose a new file (a backup never overwrites one)", dest)
	}
	tmp := dest + ".partial"
	os.Remove(tmp) // a leftover of an interrupted run
	if err := vacuumInto(ctx, src, tmp); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	rep, err := VerifySQLite(ctx, tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("backup: %w", err)
	}
	rep.Path = dest
	return rep, nil
}

// vacuumInto copies src to dest through a read-only connection of its own:
// the store's readers are query_only, which refuses VACUUM INTO, and a
// read-only open never creates or changes the source.
func vacuumInto(ctx context.Context, src, dest string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO $1`, dest); err != nil {
		return fmt.Errorf("backup: copy %s: %w", src, err)
	}
	return nil
}

// VerifySQLite opens the SQLite file at path read-only, checks its
// integrity and reads what it holds: its schema version and counts.
func VerifySQLite(ctx context.Context, path string) (*BackupReport, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer db.Close()
	rep := &BackupReport{Path: path, Bytes: fi.Size()}
	// integrity_check answers one row "ok", or up to 100 rows of faults.
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	var faults []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, fmt.Errorf("verify %s: %w", path, err)
		}
		faults = append(faults, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verify %s: %w", path, err)
	}
	if len(faults) != 1 || faults[0] != "ok" {
		return nil, fmt.Errorf("verify %s: integrity check failed: %s", path, strings.Join(faults, "; "))
	}
	rep.Integrity = "ok"
	err = db.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied),
		(SELECT COUNT(*) FROM beets),
		(SELECT COUNT(*) FROM events)`).Scan(&rep.SchemaVersion, &rep.Beets, &rep.Events)
	if err != nil {
		return nil, fmt.Errorf("verify %s: not a Beet database: %w", path, err)
	}
	return rep, nil
}

// sqliteFile turns the part of a sqlite: URL after the scheme into an
// absolute path: "///abs" → "/abs"; "//rel" and "rel" → relative to the
// working directory.
func sqliteFile(rest string) (string, error) {
	path := strings.TrimPrefix(rest, "//")
	switch {
	case path == "":
		return "", errors.New("the URL names no file (want sqlite:///abs/path.db or sqlite:relative.db)")
	case strings.ContainsAny(path, "?#"):
		return "", fmt.Errorf("path %q: query parameters are not supported; the store sets its own pragmas", path)
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return "", fmt.Errorf("%q is not a file path (in-memory databases cannot be shared by the read and write pools)", path)
	}
	return filepath.Abs(path)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
