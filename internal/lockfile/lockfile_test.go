//go:build unix

package lockfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/beethq/beet/internal/lockfile"
)

// flock locks belong to open file descriptions, so a second Acquire in the
// same process conflicts just as another process would.
func TestSecondAcquireNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "beet.db.lock")
	l, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockfile.Acquire(path)
	var held *lockfile.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() || held.Path != path {
		t.Fatalf("second Acquire: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}
