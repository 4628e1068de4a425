package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// TestAddEventsUnsynced checks the SQLite side of BEET_INGEST_FSYNC=overlap:
// a commit of AddEventsUnsynced is stored at once, leaves the write
// connection at synchronous=FULL for every other write, SyncEvents fsyncs
// the WAL file, and after a failed fsync every event write is refused.
func TestAddEventsUnsynced(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "beet.db")
	db := testdb.Open(t, "sqlite://"+path)
	if !db.SyncsApart() {
		t.Skip("SyncEvents is offered on Linux only")
	}
	b := newAutoBeets(t, db, "wal@example.com", 1)[0]
	at := time.Now().UTC().Truncate(time.Microsecond)
	event := func(i byte) []beet.Event {
		return []beet.Event{{ID: beet.EventID{i, 0x5a}, Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET"}}
	}
	stored := func() int {
		t.Helper()
		evs, err := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	if err := db.AddEventsUnsynced(ctx, event(1), nil); err != nil {
		t.Fatal(err)
	}
	if n := stored(); n != 1 {
		t.Fatalf("%d events stored after AddEventsUnsynced, want 1", n)
	}
	if v, err := db.WriteSynchronousForTest(ctx); err != nil || v != 2 {
		t.Fatalf("synchronous on the write connection after AddEventsUnsynced = %d, %v; want 2 (FULL) for the other writes", v, err)
	}
	if err := db.SyncEvents(); err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if got := db.SyncedFileForTest(); got == nil || !os.SameFile(got, wal) {
		t.Fatalf("SyncEvents fsynced %v, not the WAL %s", got, path+"-wal")
	}

	// A failed fsync stays failed: Linux may have dropped the unwritten
	// pages, so a later fsync proves nothing about them.
	broken := errors.New("EIO")
	calls := 0
	db.SetSyncHookForTest(func() error { calls++; return broken })
	if err := db.AddEventsUnsynced(ctx, event(2), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SyncEvents(); !errors.Is(err, broken) {
		t.Fatalf("SyncEvents = %v, want the fsync's error", err)
	}
	db.SetSyncHookForTest(nil)
	if err := db.SyncEvents(); !errors.Is(err, broken) {
		t.Fatalf("SyncEvents after a failed one = %v, want the first failure again", err)
	}
	if err := db.AddEventsUnsynced(ctx, event(3), nil); err == nil {
		t.Fatal("AddEventsUnsynced after a failed fsync succeeded")
	}
	if err := db.AddEvents(ctx, event(4), nil); err == nil {
		t.Fatal("AddEvents after a failed fsync succeeded")
	}
	if n := stored(); n != 2 || calls != 1 {
		t.Fatalf("%d events stored, %d fsyncs tried; want 2 and 1", n, calls)
	}
}
