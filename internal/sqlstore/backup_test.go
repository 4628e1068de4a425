package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// TestBackupVerifiesTheCopy: a backup reports what it holds, and the
// verification it relies on refuses a damaged file.
func TestBackupVerifiesTheCopy(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t, "sqlite")
	testdb.Open(t, url) // migrated, empty
	dest := filepath.Join(t.TempDir(), "copy.db")
	rep, err := sqlstore.BackupSQLite(ctx, url, dest)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Integrity != "ok" || rep.SchemaVersion < 1 || rep.Bytes == 0 || rep.Path != dest {
		t.Fatalf("report %+v", rep)
	}

	// Overwrite the middle of the file: the b-trees no longer check out.
	b, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 3; i < len(b)/3+4096 && i < len(b); i++ {
		b[i] = 0xA5
	}
	broken := filepath.Join(t.TempDir(), "broken.db")
	os.WriteFile(broken, b, 0o600)
	if _, err := sqlstore.VerifySQLite(ctx, broken); err == nil {
		t.Fatal("a damaged copy passed verification")
	}

	// A database that does not exist is not created by a backup of it.
	other := filepath.Join(t.TempDir(), "other.db")
	if _, err := sqlstore.BackupSQLite(ctx, "sqlite://"+other, filepath.Join(t.TempDir(), "x.db")); err == nil || !strings.Contains(err.Error(), "other.db") {
		t.Fatalf("backup of a missing database: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Fatal("the backup created the database it was asked to copy")
	}
	if _, err := sqlstore.BackupSQLite(ctx, "postgres://u@h/db", dest+".2"); !errors.Is(err, sqlstore.ErrBackupPostgres) {
		t.Fatalf("postgres URL: %v", err)
	}
}
