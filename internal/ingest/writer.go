package ingest

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
)

// WriterStore is what the writer needs from the database.
type WriterStore interface {
	AddEvents(ctx context.Context, events []beet.Event, observe beet.Observer) error
}

// UnsyncedStore is a WriterStore that can commit a group without waiting
// for the disk, and make such commits durable later with one flush.
type UnsyncedStore interface {
	WriterStore
	// AddEventsUnsynced is AddEvents whose commit is durable only once a
	// SyncEvents begun after it returned has returned nil.
	AddEventsUnsynced(ctx context.Context, events []beet.Event, observe beet.Observer) error
	// SyncEvents makes every commit AddEventsUnsynced returned before the
	// call durable.
	SyncEvents() error
}

// WriterOptions tunes group commit. Zero values take the defaults.
type WriterOptions struct {
	MaxBatch int           // events per transaction; default 256
	MaxWait  time.Duration // how long a group waits to fill; default 0: take what is queued
	// ReplayEvery is how often the spool is retried against the database.
	ReplayEvery time.Duration // default 1s
	// CommitTimeout bounds one database commit before the group goes to the spool.
	CommitTimeout time.Duration // default 5s
	// Lanes is how many groups may be committing at once; default 1.
	// Events are shared among the lanes by token (by beet), so a beet's
	// events stay in one lane, in order, and two lanes never write the
	// same beet. A database that commits concurrent transactions with one
	// WAL flush (PostgreSQL) takes one lane's group while another's flush
	// is under way; on SQLite, whose single writer would queue them, keep 1.
	Lanes int
	Log   *slog.Logger
	// Observe, if set, is applied to the beets of every group inside the
	// transaction that stores it, directly or by replay (beet.Observer), so
	// detection follows every committed event at no commit of its own.
	Observe beet.Observer
	// SyncApart commits each group with AddEventsUnsynced and answers its
	// requests only after a SyncEvents begun after that commit returned;
	// meanwhile the lane builds and commits the next group, so a commit
	// does not wait for the last one's fsync. One SyncEvents serves every
	// group committed while the one before it ran. The store must be an
	// UnsyncedStore; otherwise SyncApart is ignored.
	SyncApart bool
	// OnCommit, if set, is told each group the writer tried to commit to
	// the database: the events it stored (all of them if it failed), how
	// long the commit took, and whether it succeeded (metrics).
	OnCommit func(events int, took time.Duration, ok bool)
}

// ErrWriterClosed is returned by Write after Close.
var ErrWriterClosed = errors.New("event writer is closed")

// ErrStaleToken is returned by Write for an event the store dropped because
// its beet's token was rotated after the token was looked up: nothing was
// recorded, as for any old token.
var ErrStaleToken = errors.New("the token was rotated; event not recorded")

// ErrNoBeet is returned by Record for an event whose token no beet had at
// its commit (never a beet's, rotated or deleted): nothing was recorded.
var ErrNoBeet = errors.New("no beet has the token; event not recorded")

// Writer is the single owner of event writes. Requests hand it events and
// wait; it commits them in groups (one transaction for many requests) and
// answers each request only once the group holding its event is committed,
// to the database or, while the database is down, to the spool. Replay
// moves spooled events into the database in order, exactly once (event IDs
// make a repeated insert a no-op).
type Writer struct {
	store WriterStore
	spool *Spool
	opt   WriterOptions
	log   *slog.Logger

	// A request holds mu (for reading) only to check closed and join
	// senders; it waits for the queue and its commit holding no lock.
	mu      sync.RWMutex
	closed  bool
	senders sync.WaitGroup // requests between that check and their send
	lanes   []*lane
	seed    maphash.Seed
	done    chan struct{}

	// While the spool holds events, new ones queue behind them in the spool,
	// or the database would see them out of order. Only the writer appends
	// and only the replayer empties, so spool.Size() > 0 is the whole state.
	stopReplay chan struct{}
	replayDone chan struct{}

	stats WriterStats

	// unmatched hears, after a commit or a replay, of each event whose
	// token matched no beet (never a beet's, rotated or deleted): the
	// handler notes it among unknown or old tokens. It must not block.
	unmatched atomic.Pointer[func(ev *beet.Event)]
}

// WriterStats counts what the writer did, for metrics and tests.
type WriterStats struct {
	Committed atomic.Int64 // events committed to the database directly (stored, or dropped by the commit: no beet has their token)
	Spooled   atomic.Int64 // events written to the spool
	Replayed  atomic.Int64 // spooled events moved into the database
	Dropped   atomic.Int64 // events not stored: no beet had their token at replay, or spool full
	Batches   atomic.Int64
	// CommitNanos is the time spent in database commits (direct and
	// replay); DetectNanos the part of it spent in Observe, over
	// DetectBeets calls (one per beet per commit).
	CommitNanos atomic.Int64
	DetectNanos atomic.Int64
	DetectBeets atomic.Int64
	// Syncs and SyncNanos count the SyncEvents calls of SyncApart and the
	// time spent in them (each an fsync, beside the next commit).
	Syncs     atomic.Int64
	SyncNanos atomic.Int64
}

// lane is a queue of requests and the goroutine that commits them, one
// group at a time.
type lane struct {
	reqs chan *writeReq
	// inFlight is the receipt time (Unix µs) of the oldest event of the
	// group the lane is committing, 0 when none: events queued behind it
	// came later, so before the oldest of all lanes' everything the writer
	// took is committed.
	inFlight atomic.Int64
}

type writeReq struct {
	ev     beet.Event
	beetID int64 // the beet the commit stored ev for; 0 if none (or spooled)
	res    error // the commit's answer, held until the sync (SyncApart)
	errc   chan error
}

var reqPool = sync.Pool{New: func() any { return &writeReq{errc: make(chan error, 1)} }}

// NewWriter starts a writer. Events already in the spool are replayed first.
func NewWriter(store WriterStore, spool *Spool, opt WriterOptions) *Writer {
	if opt.MaxBatch <= 0 {
		opt.MaxBatch = 256
	}
	if opt.ReplayEvery <= 0 {
		opt.ReplayEvery = time.Second
	}
	if opt.CommitTimeout <= 0 {
		opt.CommitTimeout = 5 * time.Second
	}
	if opt.Lanes <= 0 {
		opt.Lanes = 1
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if _, ok := store.(UnsyncedStore); !ok {
		opt.SyncApart = false
	}
	w := &Writer{
		store: store, spool: spool, opt: opt, log: opt.Log.With("component", "writer"),
		seed: maphash.MakeSeed(), done: make(chan struct{}),
		stopReplay: make(chan struct{}), replayDone: make(chan struct{}),
	}
	for range opt.Lanes {
		w.lanes = append(w.lanes, &lane{reqs: make(chan *writeReq, 4*opt.MaxBatch)})
	}
	if observe := opt.Observe; observe != nil {
		w.opt.Observe = func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
			t0 := time.Now()
			flips := observe(b, sp)
			w.stats.DetectNanos.Add(int64(time.Since(t0)))
			w.stats.DetectBeets.Add(1)
			return flips
		}
	}
	if spool.Size() > 0 {
		w.log.Warn("spool holds events from before; replaying them", "bytes", spool.Size())
	}
	go w.run()
	go w.replayLoop()
	return w
}

// Stats returns the writer's counters.
func (w *Writer) Stats() *WriterStats { return &w.stats }

// Write hands an event to the writer and waits until it is committed. An
// event with a Token is stored for the beet that has the token at commit
// (so it needs no BeetID); while the database is down it waits in the
// spool by its Token. A nil error means the event is durable.
func (w *Writer) Write(ev beet.Event) error {
	_, err := w.Record(ev)
	if err == ErrNoBeet {
		return nil // as for any unknown token: nothing to store
	}
	return err
}

// Record is Write that also says what became of the event: the ID of the
// beet its commit stored it for, or ErrNoBeet when no beet had its token.
// An event spooled while the database is down returns 0 and nil: it is
// durable, and matched to its beet when it is replayed.
func (w *Writer) Record(ev beet.Event) (int64, error) {
	r := reqPool.Get().(*writeReq)
	r.ev, r.beetID = ev, 0
	w.mu.RLock()
	closed := w.closed
	if !closed {
		w.senders.Add(1)
	}
	w.mu.RUnlock()
	if closed {
		reqPool.Put(r)
		return 0, ErrWriterClosed
	}
	w.lanes[w.laneOf(&ev)].reqs <- r
	w.senders.Done()
	err := <-r.errc
	id := r.beetID
	r.ev = beet.Event{}
	reqPool.Put(r)
	return id, err
}

// Close stops taking events, commits every queued one, tries a last replay
// of the spool and returns. Call it after the HTTP server has drained.
func (w *Writer) Close() {
	w.mu.Lock()
	wasClosed := w.closed
	w.closed = true
	w.mu.Unlock()
	if !wasClosed {
		w.senders.Wait() // every request that got in has queued its event
		for _, l := range w.lanes {
			close(l.reqs)
		}
	}
	<-w.done
	close(w.stopReplay)
	<-w.replayDone
	w.replay() // a last try, so a clean stop leaves the spool empty when it can
}

// Spooling reports whether events are waiting in the spool.
func (w *Writer) Spooling() bool { return w.spool.Size() > 0 }

// SpoolBytes is the size of the events waiting in the spool (metrics).
func (w *Writer) SpoolBytes() int64 { return w.spool.Size() }

// CommittedBefore is the instant before which every event handed to the
// writer is committed: the receipt time of the oldest event in the commit
// under way, or now when none is. Deadline sweeps stay behind it so our
// own backlog never looks like a beet's silence.
func (w *Writer) CommittedBefore(now time.Time) time.Time {
	before := now.UnixMicro()
	for _, l := range w.lanes {
		if us := l.inFlight.Load(); us != 0 && us < before {
			before = us
		}
	}
	if before == now.UnixMicro() {
		return now
	}
	return time.UnixMicro(before)
}

// laneOf is the lane of an event: by its token, or by its beet for an
// event without one, so all of a beet's events go through one lane.
func (w *Writer) laneOf(ev *beet.Event) int {
	if len(w.lanes) == 1 {
		return 0
	}
	var h uint64
	if ev.Token != "" {
		h = maphash.String(w.seed, ev.Token)
	} else {
		h = maphash.Comparable(w.seed, ev.BeetID)
	}
	return int(h % uint64(len(w.lanes)))
}

// run commits every lane's groups until the lanes are closed and drained.
func (w *Writer) run() {
	defer close(w.done)
	var wg sync.WaitGroup
	for _, l := range w.lanes {
		wg.Go(func() { w.runLane(l) })
	}
	wg.Wait()
}

// runLane commits a lane's groups, one at a time. It takes a group's first
// request and all that queued behind it, up to MaxBatch: under load the
// groups grow while the lane's commit is under way, and when the database
// is idle a request is committed at once.
func (w *Writer) runLane(l *lane) {
	var s *syncer
	if w.opt.SyncApart {
		s = w.startSyncer()
		defer s.close()
	}
	batch := make([]*writeReq, 0, w.opt.MaxBatch)
	for r := range l.reqs {
		if s != nil {
			s.waitTaken()
		}
		batch = w.gather(l.reqs, append(batch[:0], r))
		w.commit(batch, &l.inFlight, s)
	}
}

func (w *Writer) replayLoop() {
	defer close(w.replayDone)
	t := time.NewTicker(w.opt.ReplayEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stopReplay:
			return
		case <-t.C:
			w.replay()
		}
	}
}

// gather adds queued requests to the group, up to MaxBatch, waiting at most
// MaxWait for more when the queue runs dry.
func (w *Writer) gather(reqs <-chan *writeReq, batch []*writeReq) []*writeReq {
	var deadline <-chan time.Time
	for len(batch) < w.opt.MaxBatch {
		select {
		case r, ok := <-reqs:
			if !ok {
				return batch
			}
			batch = append(batch, r)
			continue
		default:
		}
		if w.opt.MaxWait <= 0 {
			return batch
		}
		if deadline == nil {
			t := time.NewTimer(w.opt.MaxWait)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case r, ok := <-reqs:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		case <-deadline:
			return batch
		}
	}
	return batch
}

// commit writes one group and answers its requests, or with s (SyncApart)
// hands them to s to be answered after its next fsync.
func (w *Writer) commit(batch []*writeReq, inFlight *atomic.Int64, s *syncer) {
	// Cleared only once the group is in the database or the spool (the
	// sweeper holds while the spool has events), and before the requests
	// are answered, so an acknowledged event is never still "in flight".
	defer inFlight.Store(0)
	w.stats.Batches.Add(1)
	direct := w.spool.Size() == 0
	if direct {
		events := make([]beet.Event, len(batch))
		for i, r := range batch {
			events[i] = r.ev
		}
		oldest := events[0].ReceivedAt
		for _, e := range events[1:] {
			if e.ReceivedAt.Before(oldest) {
				oldest = e.ReceivedAt
			}
		}
		inFlight.Store(max(oldest.UnixMicro(), 1))
		ctx, cancel := context.WithTimeout(context.Background(), w.opt.CommitTimeout)
		start := time.Now()
		var err error
		if s != nil {
			err = w.store.(UnsyncedStore).AddEventsUnsynced(ctx, events, w.opt.Observe)
		} else {
			err = w.store.AddEvents(ctx, events, w.opt.Observe)
		}
		w.stats.CommitNanos.Add(int64(time.Since(start)))
		cancel()
		// The commit-size histogram counts the events a commit stored
		// (those whose token no beet had are dropped inside it); Committed,
		// every event a successful commit took.
		n := len(events)
		if err == nil {
			for i := range events {
				if events[i].BeetID == 0 {
					n--
				}
			}
		}
		if w.opt.OnCommit != nil {
			w.opt.OnCommit(n, time.Since(start), err == nil)
		}
		if err == nil {
			w.stats.Committed.Add(int64(len(batch)))
			inFlight.Store(0)
			// Unmatched tokens are noted before the requests are answered,
			// so a request's answer finds its token already noted.
			w.noteUnmatched(events)
			for i, r := range batch {
				r.beetID = events[i].BeetID
				switch {
				case events[i].Stale:
					r.res = ErrStaleToken
				case events[i].BeetID == 0:
					r.res = ErrNoBeet
				default:
					r.res = nil
				}
			}
			if s != nil {
				s.add(batch)
				return
			}
			for _, r := range batch {
				r.errc <- r.res
			}
			return
		}
		w.log.Error("database commit failed; spooling events until it is back", "events", len(batch), "err", err)
	}
	items := make([]beet.Event, len(batch))
	for i, r := range batch {
		items[i] = r.ev
	}
	err := w.spool.Append(items)
	if err != nil {
		w.stats.Dropped.Add(int64(len(batch)))
		w.log.Error("spool write failed; events lost", "events", len(batch), "err", err)
	} else {
		if w.stats.Spooled.Add(int64(len(batch))) == int64(len(batch)) || direct {
			w.log.Warn("events now go to the spool", "events", len(batch))
		}
	}
	inFlight.Store(0)
	answer(batch, err)
}

// noteUnmatched hands the events that a commit matched to no beet to the
// unmatched hook.
func (w *Writer) noteUnmatched(events []beet.Event) {
	hook := w.unmatched.Load()
	if hook == nil {
		return
	}
	for i := range events {
		if e := &events[i]; e.BeetID == 0 && e.Token != "" {
			(*hook)(e)
		}
	}
}

func answer(batch []*writeReq, err error) {
	for _, r := range batch {
		r.errc <- err
	}
}

// replay moves spooled events into the database, in spool order, in
// groups. It stops at the first database error and tries again later.
// Once everything is in, it empties the spool and direct writes resume.
func (w *Writer) replay() {
	if w.spool.Size() == 0 {
		return
	}
	var offset int64
	for {
		group := make([]beet.Event, 0, w.opt.MaxBatch)
		flush := func() error {
			if len(group) == 0 {
				return nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), w.opt.CommitTimeout)
			defer cancel()
			if err := w.store.AddEvents(ctx, group, w.opt.Observe); err != nil {
				return err
			}
			// The commit matched each event to its beet by token; one it
			// matched to none is dropped, and noted like a live request
			// with an unknown or old token.
			w.noteUnmatched(group)
			for _, e := range group {
				if e.BeetID != 0 {
					w.stats.Replayed.Add(1)
					continue
				}
				w.stats.Dropped.Add(1)
				w.log.Warn("spooled event for an unknown token dropped", "token", beet.Redact(e.Token))
			}
			group = group[:0]
			return nil
		}
		end, err := w.spool.ReadFrom(offset, func(ev beet.Event) error {
			group = append(group, ev)
			if len(group) == cap(group) {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			w.log.Debug("replay waits for the database", "err", err)
			return
		}
		// Records after end were appended while we replayed: go on from there.
		emptied, err := w.spool.TruncateIf(end)
		if err != nil {
			w.log.Error("spool truncate failed", "err", err)
			return
		}
		if emptied {
			w.log.Info("spool replayed; events go to the database again", "replayed", w.stats.Replayed.Load())
			return
		}
		offset = end
	}
}

// syncer answers a lane's committed groups after the fsync that makes them
// durable (SyncApart). It takes every group committed so far, calls
// SyncEvents once for all of them and answers them; groups committed
// while that runs wait for the next call, since it may have begun before
// their commit returned.
//
// The lane commits its next group while an fsync runs, but no more than
// one: every group committed during one fsync is answered after the same
// next one, so a second commit in that time would only split the group,
// and a commit costs CPU whatever its size (one fsync of 1.4 ms beside
// commits of 0.3 ms made groups of 9 events instead of 31, and the
// closed loop slower, on the loaded 2-core machine).
type syncer struct {
	w       *Writer
	mu      sync.Mutex
	taken   *sync.Cond  // signalled when a sync takes what is pending
	pending []*writeReq // committed, no sync begun since
	wake    chan struct{}
	done    chan struct{}
}

func (w *Writer) startSyncer() *syncer {
	s := &syncer{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.taken = sync.NewCond(&s.mu)
	go s.run()
	return s
}

// waitTaken waits until no committed group waits for an fsync to begin.
func (s *syncer) waitTaken() {
	s.mu.Lock()
	for len(s.pending) > 0 {
		s.taken.Wait()
	}
	s.mu.Unlock()
}

// add hands it a committed group; the caller may reuse the slice.
func (s *syncer) add(batch []*writeReq) {
	s.mu.Lock()
	s.pending = append(s.pending, batch...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is due already, and it takes everything added
	}
}

func (s *syncer) run() {
	defer close(s.done)
	store := s.w.store.(UnsyncedStore)
	var took []*writeReq
	for range s.wake {
		s.mu.Lock()
		took, s.pending = s.pending, took[:0]
		s.taken.Broadcast()
		s.mu.Unlock()
		if len(took) == 0 {
			continue
		}
		start := time.Now()
		err := store.SyncEvents()
		s.w.stats.SyncNanos.Add(int64(time.Since(start)))
		s.w.stats.Syncs.Add(1)
		if err != nil {
			// The events are in the database but maybe not on disk: the
			// requests fail (the senders retry); SyncEvents and the
			// commits keep failing, so the events after go to the spool.
			s.w.log.Error("fsync of committed events failed; their requests fail", "events", len(took), "err", err)
		}
		for i, r := range took {
			if err != nil && r.res == nil {
				r.res = err
			}
			r.errc <- r.res
			took[i] = nil
		}
	}
}

// close answers what is pending and stops, once the lane commits no more.
func (s *syncer) close() {
	close(s.wake)
	<-s.done
}
