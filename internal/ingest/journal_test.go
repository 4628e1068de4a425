package ingest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

// TestJournalAnswersBeforeTheDatabase: with Journal a request is answered
// once its event is in the spool, while the database commit is still held;
// until that commit the sweeper's bound stays at the event's receipt, and
// once it is in the event is stored and observed once. WaitApplied waits
// for that commit, and returns as soon as it is in.
func TestJournalAnswersBeforeTheDatabase(t *testing.T) {
	store := &gatedStore{Store: openTestStore(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBeet(t, store.Store)
	spool, err := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(store, spool, WriterOptions{Journal: true, Observe: func(*beet.Beet, beet.EventSpan) []beet.Flip { return nil }})
	defer w.Close()
	now := time.Now().UTC()
	ev := newEvent(b.ID, 0)
	ev.ReceivedAt = now.Add(-time.Minute).Truncate(time.Microsecond)

	done := make(chan error, 1)
	go func() { done <- w.Write(ev) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request waited for the database commit")
	}
	<-store.entered // the replayer is applying it, held at the gate
	if n := countEvents(t, store.Store, b.ID); n != 0 {
		t.Fatalf("%d events in the database before its commit", n)
	}
	if got := w.CommittedBefore(now); !got.Equal(ev.ReceivedAt) {
		t.Errorf("before the commit: CommittedBefore = %v, want the event's receipt %v", got, ev.ReceivedAt)
	}
	if !w.Spooling() && w.SpoolBytes() == 0 {
		t.Error("the journal reports no bytes waiting for the database")
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := w.WaitApplied(short); err != context.DeadlineExceeded {
		t.Errorf("WaitApplied before the commit = %v, want the deadline's error", err)
	}
	cancel()
	close(store.gate)
	long, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitApplied(long); err != nil {
		t.Fatalf("WaitApplied after the commit: %v", err)
	}
	if n := countEvents(t, store.Store, b.ID); n != 1 {
		t.Fatalf("WaitApplied returned with %d events in the database, want 1", n)
	}
	waitFor(t, "the sweeper's bound back at now", func() bool { return w.CommittedBefore(now).Equal(now) })
	if w.Spooling() {
		t.Error("Spooling() with a database that takes every event")
	}
	if store.observed.Load() != 1 {
		t.Errorf("the observer saw %d events, want 1", store.observed.Load())
	}
}

// countingStore counts the events its observer saw.
type countingStore struct {
	beet.Store
	observed atomic.Int64
}

func (c *countingStore) AddEvents(ctx context.Context, evs []beet.Event, observe beet.Observer) error {
	return c.Store.AddEvents(ctx, evs, func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		c.observed.Add(int64(sp.Count))
		if observe == nil {
			return nil
		}
		return observe(b, sp)
	})
}

// TestJournalRestartAppliesOnlyTheRest: a crash leaves a spool whose first
// records the database has and whose last it has not. The next start
// applies only the last, so detection sees each event once.
func TestJournalRestartAppliesOnlyTheRest(t *testing.T) {
	store := &countingStore{Store: openTestStore(t)}
	b := newTestBeet(t, store.Store)
	path := filepath.Join(t.TempDir(), "spool")
	spool, err := OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var first, rest []beet.Event
	for i := range 5 {
		first = append(first, newEvent(b.ID, i))
	}
	for i := range 3 {
		rest = append(rest, newEvent(b.ID, 10+i))
	}
	if err := spool.Append(first); err != nil {
		t.Fatal(err)
	}
	applied := spool.End()
	if err := store.Store.AddEvents(context.Background(), first, nil); err != nil {
		t.Fatal(err)
	}
	if err := spool.MarkApplied(applied); err != nil {
		t.Fatal(err)
	}
	if err := spool.Append(rest); err != nil {
		t.Fatal(err)
	}
	spool.Close() // the crash: nothing more reaches the files

	spool, err = OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := spool.Applied(); got != applied {
		t.Fatalf("reopened spool: applied %d, want %d", got, applied)
	}
	w := NewWriter(store, spool, WriterOptions{Journal: true, ReplayEvery: 10 * time.Millisecond})
	if !w.Spooling() {
		t.Error("a journal reopened with unapplied events does not say it is behind")
	}
	w.Close()
	if n := countEvents(t, store.Store, b.ID); n != 8 {
		t.Fatalf("%d events after the restart, want 8", n)
	}
	if got := store.observed.Load(); got != 3 {
		t.Fatalf("detection saw %d events at the restart, want the 3 unapplied ones", got)
	}
	if spool.Size() != 0 {
		t.Fatalf("the spool holds %d bytes after a clean stop", spool.Size())
	}
	if _, err := os.Stat(path + ".applied"); err != nil {
		t.Fatal(err)
	}
	spool.Close()
	if spool, _ = OpenSpool(path, 0); spool.Applied() != 0 || spool.Size() != 0 {
		t.Fatalf("emptied spool reopened: applied %d, size %d", spool.Applied(), spool.Size())
	}
	spool.Close()
}

// TestJournalStaysSmallUnderAStream: requests that never pause keep the
// spool from emptying; it is compacted instead, so the applied records in
// front of the file stay near 1 MiB (what the replayer has not applied yet
// is another matter: a slow database, or the race detector, grows it), and
// every answered event ends up stored once.
func TestJournalStaysSmallUnderAStream(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3 MiB of journal")
	}
	store := openTestStore(t)
	b := newTestBeet(t, store)
	path := filepath.Join(t.TempDir(), "spool")
	spool, err := OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(store, spool, WriterOptions{Journal: true})
	big := string(make([]byte, 900)) // about 1 KiB a record: 3 MiB of journal in 3,000 events
	var (
		wg      sync.WaitGroup
		largest atomic.Int64 // applied bytes still in the file
		next    atomic.Int64
	)
	for range 16 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > 3000 {
					return
				}
				ev := newEvent(b.ID, int(i))
				ev.UserAgent = big
				if err := w.Write(ev); err != nil {
					t.Error(err)
					return
				}
				if fi, err := os.Stat(path); err == nil && fi.Size()-w.SpoolBytes() > largest.Load() {
					largest.Store(fi.Size() - w.SpoolBytes())
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	if n := countEvents(t, store, b.ID); n != 3000 {
		t.Fatalf("%d events stored, want 3000", n)
	}
	if l := largest.Load(); l > 2*journalCompactBytes {
		t.Fatalf("the spool file held %d applied bytes under the stream, want it compacted near %d", l, journalCompactBytes)
	}
	if spool.Size() != 0 {
		t.Fatalf("the spool holds %d bytes after a clean stop", spool.Size())
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("a compaction's file was left behind: %v", err)
	}
}
