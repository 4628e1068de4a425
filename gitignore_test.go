package beet_test

import (
	"os/exec"
	"strings"
	"testing"
)

// What `beet serve` writes in a checkout (the database, its WAL files, the
// ingestion spool with its applied position, and the lock files) is ignored
// by git, so nobody commits their events.
func TestGitignoreCoversRuntimeFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	files := []string{"beet.db", "beet.db-wal", "beet.db-shm", "beet.db.spool", "beet.spool", "data/prod.db.spool",
		"beet.db.lock", "beet.db.spool.applied", "beet.db.spool.lock", "data/prod.db.spool.applied"}
	out, err := exec.Command("git", append([]string{"check-ignore", "--no-index"}, files...)...).Output()
	if err != nil && len(out) == 0 {
		t.Skipf("git check-ignore: %v (not a git checkout?)", err)
	}
	ignored := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		ignored[l] = true
	}
	for _, f := range files {
		if !ignored[f] {
			t.Errorf("%s is not ignored by .gitignore", f)
		}
	}
}
