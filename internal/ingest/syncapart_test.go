package ingest

import (
	"path/filepath"
	"testing"
	"time"
)

// heldSync is the real SQLite store whose SyncEvents waits at a gate
// before it fsyncs, as a slow disk would.
type heldSync struct {
	UnsyncedStore
	entered chan struct{}
	gate    chan struct{}
}

func (h *heldSync) SyncEvents() error {
	h.entered <- struct{}{}
	<-h.gate
	return h.UnsyncedStore.SyncEvents()
}

// TestWriterAnswersAfterTheFsync checks SyncApart: a request is answered
// only once an fsync begun after its commit has returned, and the next
// group is committed while that fsync runs.
func TestWriterAnswersAfterTheFsync(t *testing.T) {
	store := openTestStore(t)
	b := newTestBeet(t, store)
	h := &heldSync{UnsyncedStore: store.(UnsyncedStore), entered: make(chan struct{}, 16), gate: make(chan struct{})}
	spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	w := NewWriter(h, spool, WriterOptions{SyncApart: true})
	released := false
	defer func() {
		if !released { // a failure left the gate shut: open it for Close
			close(h.gate)
		}
		w.Close()
	}()
	write := func(i int) chan error {
		done := make(chan error, 1)
		go func() { done <- w.Write(newEvent(b.ID, i)) }()
		return done
	}
	notAnswered := func(done chan error, what string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("%s answered (%v) while the fsync it waits for is held", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	answered := func(done chan error, what string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s not answered 5 s after its fsync returned", what)
		}
	}
	syncBegins := func() {
		t.Helper()
		select {
		case <-h.entered:
		case <-time.After(5 * time.Second):
			t.Fatal("no fsync began 5 s after a commit")
		}
	}
	stored := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); countEvents(t, store, b.ID) != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d events stored, want %d", countEvents(t, store, b.ID), want)
			}
		}
	}

	first := write(0)
	syncBegins() // the first group is committed; its fsync is held
	stored(1)
	notAnswered(first, "the first request")

	second := write(1)
	stored(2) // committed beside the held fsync
	notAnswered(second, "the second request")

	h.gate <- struct{}{}
	answered(first, "the first request")
	// The fsync that answered the first began before the second's commit
	// returned, so the second waits for the next one.
	syncBegins()
	notAnswered(second, "the second request")
	h.gate <- struct{}{}
	answered(second, "the second request")
	released = true
	close(h.gate)
	if s := w.Stats(); s.Syncs.Load() != 2 || s.Batches.Load() != 2 {
		t.Fatalf("%d fsyncs for %d commits, want 2 and 2", s.Syncs.Load(), s.Batches.Load())
	}
}
