package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// flakyStore is the real SQLite store with a switch that makes it fail as
// a database outage would.
type flakyStore struct {
	beet.Store
	down atomic.Bool
}

var errDown = errors.New("connection refused")

func (f *flakyStore) AddEvents(ctx context.Context, evs []beet.Event, observe beet.Observer) error {
	if f.down.Load() {
		return errDown
	}
	return f.Store.AddEvents(ctx, evs, observe)
}

func (f *flakyStore) FindBeetByToken(ctx context.Context, token string) (*beet.Beet, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.FindBeetByToken(ctx, token)
}

func openTestStore(t *testing.T) beet.Store { return testdb.New(t, "sqlite") }

// newTestBeet makes an account with one beet and returns the beet.
func newTestBeet(t *testing.T, store beet.Store) *beet.Beet {
	t.Helper()
	ctx := context.Background()
	a := &beet.Account{Plan: beet.PlanFree, CreatedAt: time.Now()}
	u := &beet.User{Email: beet.NewToken()[3:12] + "@example.com", PasswordHash: "x", CreatedAt: time.Now()}
	if err := store.CreateAccount(ctx, a, u); err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{AccountID: a.ID, Name: "t", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := store.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func countEvents(t *testing.T, store beet.Store, beetID int64) int {
	t.Helper()
	n := 0
	var until *time.Time
	for {
		evs, err := store.FindEvents(context.Background(), beet.EventFilter{BeetID: beetID, Until: until, Limit: beet.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		n += len(evs)
		if len(evs) < beet.MaxPageLimit {
			return n
		}
		u := evs[len(evs)-1].ReceivedAt
		until = &u
	}
}

func newEvent(beetID int64, i int) beet.Event {
	ev := beet.Event{BeetID: beetID, ReceivedAt: time.Now().UTC().Truncate(time.Microsecond).Add(time.Duration(i) * time.Microsecond), Method: "GET"}
	ev.ID = newEventID(ev.ReceivedAt)
	return ev
}

func withToken(ev beet.Event, token string) beet.Event {
	ev.Token = token
	return ev
}

func TestWriterGroupsConcurrentWrites(t *testing.T) {
	store := openTestStore(t)
	b := newTestBeet(t, store)
	spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	w := NewWriter(store, spool, WriterOptions{MaxBatch: 64, MaxWait: 2 * time.Millisecond})
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Go(func() {
			if err := w.Write(newEvent(b.ID, i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	w.Close()
	if n := countEvents(t, store, b.ID); n != 500 {
		t.Fatalf("%d events in the database after 500 acknowledged writes", n)
	}
	if batches := w.Stats().Batches.Load(); batches >= 500 {
		t.Fatalf("%d transactions for 500 concurrent events: no grouping", batches)
	}
	if err := w.Write(newEvent(b.ID, 0)); err != ErrWriterClosed {
		t.Fatalf("Write after Close = %v", err)
	}
}

func TestWriterSpoolsDuringOutageAndReplaysInOrder(t *testing.T) {
	store := &flakyStore{Store: openTestStore(t)}
	b := newTestBeet(t, store)
	dir := t.TempDir()
	spool, _ := OpenSpool(filepath.Join(dir, "spool"), 0)
	w := NewWriter(store, spool, WriterOptions{MaxBatch: 16, ReplayEvery: 20 * time.Millisecond})

	if err := w.Write(newEvent(b.ID, 0)); err != nil {
		t.Fatal(err)
	}
	store.down.Store(true)
	for i := 1; i <= 40; i++ {
		if err := w.Write(newEvent(b.ID, i)); err != nil {
			t.Fatalf("write during outage: %v", err)
		}
	}
	// An event whose beet could not be looked up waits in the spool by token.
	if err := w.Write(withToken(newEvent(0, 41), b.Token)); err != nil {
		t.Fatal(err)
	}
	// And one for a token that turns out not to exist is dropped at replay.
	if err := w.Write(withToken(newEvent(0, 42), beet.NewToken())); err != nil {
		t.Fatal(err)
	}
	if !w.Spooling() {
		t.Fatal("writer is not spooling during the outage")
	}
	time.Sleep(60 * time.Millisecond) // replay attempts fail while down
	if n := countEvents(t, store, b.ID); n != 1 {
		t.Fatalf("%d events in the database during the outage, want 1", n)
	}

	store.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for w.Spooling() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if w.Spooling() {
		t.Fatal("spool not replayed 5 s after recovery")
	}
	if err := w.Write(newEvent(b.ID, 43)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	evs, _ := store.FindEvents(context.Background(), beet.EventFilter{BeetID: b.ID, Limit: 1000})
	if len(evs) != 43 {
		t.Fatalf("%d events after recovery, want 43 (41 acknowledged + 1 by token + 1 after)", len(evs))
	}
	if s := w.Stats(); s.Replayed.Load() != 41 || s.Dropped.Load() != 1 {
		t.Fatalf("replayed %d dropped %d, want 41 and 1", s.Replayed.Load(), s.Dropped.Load())
	}
	if spool.Size() != 0 {
		t.Fatalf("spool holds %d bytes after replay", spool.Size())
	}
}

func TestWriterReplaysSpoolLeftByACrash(t *testing.T) {
	store := openTestStore(t)
	b := newTestBeet(t, store)
	path := filepath.Join(t.TempDir(), "spool")
	spool, _ := OpenSpool(path, 0)
	var items []beet.Event
	for i := range 10 {
		items = append(items, newEvent(b.ID, i))
	}
	spool.Append(items)
	spool.Append(items[:3]) // a replayed group seen twice must not count twice
	spool.Close()

	spool, _ = OpenSpool(path, 0)
	w := NewWriter(store, spool, WriterOptions{ReplayEvery: 10 * time.Millisecond})
	if err := w.Write(newEvent(b.ID, 100)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if n := countEvents(t, store, b.ID); n != 11 {
		t.Fatalf("%d events after restart replay, want 11", n)
	}
}

// gatedStore holds every AddEvents until the gate opens, and counts the
// events its observer saw.
type gatedStore struct {
	beet.Store
	gate     chan struct{}
	entered  chan struct{}
	observed atomic.Int64
}

func (g *gatedStore) AddEvents(ctx context.Context, evs []beet.Event, observe beet.Observer) error {
	g.entered <- struct{}{}
	<-g.gate
	counting := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		g.observed.Add(int64(sp.Count))
		return observe(b, sp)
	}
	return g.Store.AddEvents(ctx, evs, counting)
}

// TestWriterCommittedBefore: while a group is being committed, the
// writer's watermark stays at its oldest event, so a sweep cannot take
// a beet's deadline for silence when its event is still on the way in;
// and the observer is applied inside the commit.
func TestWriterCommittedBefore(t *testing.T) {
	store := &gatedStore{Store: openTestStore(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b := newTestBeet(t, store.Store)
	spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	var flips atomic.Int64
	w := NewWriter(store, spool, WriterOptions{Observe: func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		flips.Add(1)
		return nil
	}})
	defer w.Close()
	now := time.Now().UTC()
	if got := w.CommittedBefore(now); !got.Equal(now) {
		t.Fatalf("idle writer: CommittedBefore = %v, want now %v", got, now)
	}
	ev := newEvent(b.ID, 0)
	ev.ReceivedAt = now.Add(-time.Minute).Truncate(time.Microsecond)
	done := make(chan error, 1)
	go func() { done <- w.Write(ev) }()
	<-store.entered
	if got := w.CommittedBefore(now); !got.Equal(ev.ReceivedAt) {
		t.Errorf("during the commit: CommittedBefore = %v, want the event's receipt %v", got, ev.ReceivedAt)
	}
	close(store.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.CommittedBefore(now); !got.Equal(now) {
		t.Errorf("after the commit: CommittedBefore = %v, want now", got)
	}
	if store.observed.Load() != 1 || flips.Load() != 1 {
		t.Errorf("observer saw %d events in %d calls, want 1 in 1", store.observed.Load(), flips.Load())
	}
}

// TestWriterConcurrentCommitters commits groups from several lanes at
// once, as on PostgreSQL, on both engines: every acknowledged event is
// stored once, the beet's last event is the newest, and Close drains them.
func TestWriterConcurrentCommitters(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		store := testdb.New(t, engine)
		beets := []*beet.Beet{newTestBeet(t, store), newTestBeet(t, store)}
		spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
		w := NewWriter(store, spool, WriterOptions{MaxBatch: 16, Lanes: 4})
		var wg sync.WaitGroup
		for i := range 400 {
			wg.Go(func() {
				b := beets[i%2]
				if err := w.Write(withToken(newEvent(0, i), b.Token)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		w.Close()
		for _, b := range beets {
			if n := countEvents(t, store, b.ID); n != 200 {
				t.Fatalf("%d events for a beet after 200 acknowledged writes", n)
			}
			got, err := store.FindBeetByID(context.Background(), b.ID)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := store.FindEvents(context.Background(), beet.EventFilter{BeetID: b.ID, Limit: 1})
			if got.LastEventAt == nil || !got.LastEventAt.Equal(evs[0].ReceivedAt) {
				t.Fatalf("last event at %v, newest event %v", got.LastEventAt, evs[0].ReceivedAt)
			}
		}
		if before := w.CommittedBefore(time.Now()); time.Since(before) > time.Minute {
			t.Fatalf("CommittedBefore = %v with nothing in flight", before)
		}
	})
}

// laneStore is a store in memory that keeps each token's events in the
// order its commits stored them, and notes a commit of a token that
// starts while another commit of the same token is under way: two such
// commits can end in either order.
type laneStore struct {
	mu       sync.Mutex
	inFlight map[string]int
	stored   map[string][]int // each token's events (by their Value), in commit order
	overlaps int
}

func (s *laneStore) AddEvents(ctx context.Context, evs []beet.Event, observe beet.Observer) error {
	s.mu.Lock()
	toks := map[string]bool{}
	for i := range evs {
		toks[evs[i].Token] = true
	}
	for tok := range toks {
		if s.inFlight[tok] > 0 {
			s.overlaps++
		}
		s.inFlight[tok]++
	}
	s.mu.Unlock()
	time.Sleep(time.Duration(len(evs)%3) * 200 * time.Microsecond) // commits of different lengths
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range evs {
		evs[i].BeetID = 1
		s.stored[evs[i].Token] = append(s.stored[evs[i].Token], int(*evs[i].Value))
	}
	for tok := range toks {
		s.inFlight[tok]--
	}
	return nil
}

// TestWriterLanesKeepABeetsEventsInOrder: with several lanes, a beet's
// events go through one lane, queued in the order they came and committed
// one group after the other, so no two commits of one beet are ever under
// way at once (two could end in either order and store a later event
// before an earlier one), and every event is stored exactly once.
func TestWriterLanesKeepABeetsEventsInOrder(t *testing.T) {
	store := &laneStore{inFlight: map[string]int{}, stored: map[string][]int{}}
	spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	w := NewWriter(store, spool, WriterOptions{MaxBatch: 8, Lanes: 2})
	const beets, senders, each = 6, 8, 40
	toks := make([]string, beets)
	for i := range toks {
		toks[i] = beet.NewToken()
	}
	// Each sender sends its own numbers, one after the other, to every beet
	// in turn: many senders keep every beet's events queued in both lanes.
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each * beets {
				v := float64(s*1000 + i/beets)
				ev := withToken(newEvent(0, s*100000+i), toks[i%beets])
				ev.Value = &v
				if err := w.Write(ev); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	if store.overlaps > 0 {
		t.Fatalf("%d commits of a beet started while another commit of it was under way", store.overlaps)
	}
	for _, tok := range toks {
		got := store.stored[tok]
		if len(got) != senders*each {
			t.Fatalf("%d events stored for a beet, want %d", len(got), senders*each)
		}
	}
}

// TestWriterCanSpool: readiness keeps an instance in the load balancer
// during a database outage only while its spool takes pings.
func TestWriterCanSpool(t *testing.T) {
	store := &flakyStore{Store: openTestStore(t)}
	b := newTestBeet(t, store)
	spool, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), spoolHeadroom+4096)
	w := NewWriter(store, spool, WriterOptions{MaxBatch: 1, ReplayEvery: time.Hour})
	defer w.Close()
	store.down.Store(true)
	if !w.CanSpool() {
		t.Fatal("CanSpool false on an empty spool")
	}
	if err := w.Write(newEvent(b.ID, 0)); err != nil {
		t.Fatalf("spooled write: %v", err)
	}
	if !w.CanSpool() {
		t.Fatal("CanSpool false with room left")
	}
	big := newEvent(b.ID, 1)
	big.Message = string(make([]byte, 5000))
	if err := w.Write(big); err != nil {
		t.Fatalf("spooled write: %v", err)
	}
	if w.CanSpool() {
		t.Fatalf("CanSpool true with %d bytes of room", spool.Room())
	}

	// A spool whose disk refuses the append.
	spool2, _ := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	w2 := NewWriter(store, spool2, WriterOptions{MaxBatch: 1, ReplayEvery: time.Hour})
	defer w2.Close()
	spool2.f.Close()
	if err := w2.Write(newEvent(b.ID, 2)); err == nil {
		t.Fatal("a write to a closed spool succeeded")
	}
	if w2.CanSpool() {
		t.Fatal("CanSpool true after the spool refused an append")
	}
	store.down.Store(false)
	if err := w2.Write(newEvent(b.ID, 3)); err != nil {
		t.Fatal(err)
	}
	if !w2.CanSpool() {
		t.Fatal("CanSpool still false after a commit: the next outage would start unready")
	}
}
