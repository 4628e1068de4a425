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
	// Journal answers a group's requests once it is in the spool (one
	// append and one fsync), and the replayer applies the spool to the
	// database right behind, in groups as large as have queued. A request
	// then waits for no database commit: the commit's CPU and its stalls
	// leave the acknowledgement's path. Lanes and SyncApart are ignored.
	Journal bool
}

// journalCompactBytes is how much of the journal the replayer lets pile up
// in front of the spool file, applied, before it compacts the file when
// appends keep it from emptying it.
const journalCompactBytes = 1 << 20

// journalApplyEvery is how often, at most, the replayer applies the
// journal: waiting lets a commit take more events, and a commit costs
// about the same for 1 event as for 16 (docs/BENCHMARKS.md).
const journalApplyEvery = 10 * time.Millisecond

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

	// appendFailed is set while the spool's last append failed (full, or
	// the disk refused it), so readiness can tell pings would be lost.
	appendFailed atomic.Bool

	// Journal: wake tells the replayer a group was appended; applied is
	// the logical spool offset up to which it has applied (the replayer's
	// own); behind is set while the spool holds events the database has
	// not taken beyond the journal's usual lag (the database fails, or the
	// spool held events at start); unapplied holds the oldest receipt time
	// of each appended record the replayer has not applied yet.
	wake      chan struct{}
	applied   atomic.Int64
	behind    atomic.Bool
	failing   bool // the replayer's own: its last commit failed
	unapplied journalQueue
	// appliedMoved is closed, and replaced, whenever applied moves:
	// WaitApplied waits on it.
	appliedMu    sync.Mutex
	appliedMoved chan struct{}

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
	// With Journal, Batches counts the database commits of the replayer;
	// JournalAppends the groups appended (and fsync'd) to answer requests,
	// and JournalNanos the time in those appends.
	JournalAppends atomic.Int64
	JournalNanos   atomic.Int64
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
	if _, ok := store.(UnsyncedStore); !ok || opt.Journal {
		opt.SyncApart = false
	}
	if opt.Journal {
		opt.Lanes = 1
	}
	w := &Writer{
		store: store, spool: spool, opt: opt, log: opt.Log.With("component", "writer"),
		seed: maphash.MakeSeed(), done: make(chan struct{}),
		stopReplay: make(chan struct{}), replayDone: make(chan struct{}),
		wake: make(chan struct{}, 1), appliedMoved: make(chan struct{}),
	}
	w.applied.Store(spool.Applied())
	w.behind.Store(spool.Size() > 0)
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
		w.log.Warn("spool holds events from before; replaying them", "bytes", spool.Size(), "unapplied_bytes", spool.End()-spool.Applied())
		w.wake <- struct{}{}
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
	w.stop()
	w.replay(context.Background(), true) // a last try, so a clean stop leaves the spool empty when it can
}

// CloseWithin is Close that keeps retrying the spool's replay, every
// ReplayEvery, until the spool is empty or ctx ends (the shutdown
// deadline): a stop during a database outage gives the database until then
// to come back. It returns how many events the spool still holds, which
// are replayed when a writer opens the same file again.
func (w *Writer) CloseWithin(ctx context.Context) (left int, err error) {
	w.stop()
	for {
		w.replay(ctx, true)
		if w.spool.Size() == 0 {
			return 0, nil
		}
		select {
		case <-ctx.Done():
			return w.Unapplied()
		case <-time.After(w.opt.ReplayEvery):
		}
	}
}

// Unapplied counts the events in the spool that the database does not
// have yet.
func (w *Writer) Unapplied() (int, error) {
	n := 0
	_, err := w.spool.ReadRecords(w.spool.Applied(), func(items []beet.Event, _ int64) error {
		n += len(items)
		return nil
	})
	return n, err
}

// stop ends the lanes and the replayer, once every queued event is
// committed or spooled.
func (w *Writer) stop() {
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
	if !wasClosed {
		close(w.stopReplay)
	}
	<-w.replayDone
}

// Spooling reports whether events are waiting in the spool for the
// database: with Journal, beyond the moment the replayer takes to apply
// what was just appended.
func (w *Writer) Spooling() bool {
	if w.opt.Journal {
		return w.behind.Load() && w.spool.Size() > 0
	}
	return w.spool.Size() > 0
}

// spoolHeadroom is the room CanSpool asks the spool to keep: a group of
// pings with long messages takes a few MiB.
const spoolHeadroom = 16 << 20

// CanSpool reports whether the spool can take pings: its last append
// succeeded and it has room for more. Readiness asks it while the database
// is unreachable.
func (w *Writer) CanSpool() bool {
	return !w.appendFailed.Load() && w.spool.Room() > spoolHeadroom
}

// SpoolBytes is the size of the events waiting in the spool for the
// database (metrics); with Journal, those appended and not applied yet.
func (w *Writer) SpoolBytes() int64 {
	if w.opt.Journal {
		return max(0, w.spool.End()-w.applied.Load())
	}
	return w.spool.Size()
}

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
	if us := w.unapplied.oldest(); us != 0 && us < before {
		before = us
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
	var last time.Time
	for {
		select {
		case <-w.stopReplay:
			return
		case <-t.C:
			w.replay(context.Background(), true)
		case <-w.wake:
			if w.failing { // a failing database is retried on the tick
				continue
			}
			if wait := journalApplyEvery - time.Since(last); wait > 0 {
				select {
				case <-time.After(wait):
				case <-w.stopReplay:
					return
				}
			}
			last = time.Now()
			w.replay(context.Background(), false)
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
	if !w.opt.Journal {
		w.stats.Batches.Add(1)
	}
	direct := !w.opt.Journal && w.spool.Size() == 0
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
		cancel()
		w.reportCommit(events, start, err)
		if err == nil {
			w.stats.Committed.Add(int64(len(batch)))
			w.appendFailed.Store(false) // the next outage tries the spool afresh
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
	oldest := batch[0].ev.ReceivedAt.UnixMicro()
	for i, r := range batch {
		items[i] = r.ev
		oldest = min(oldest, r.ev.ReceivedAt.UnixMicro())
	}
	start := time.Now()
	if w.opt.Journal {
		inFlight.Store(max(oldest, 1))
	}
	err := w.spool.Append(items)
	w.appendFailed.Store(err != nil)
	if w.opt.Journal {
		w.stats.JournalAppends.Add(1)
		w.stats.JournalNanos.Add(int64(time.Since(start)))
	}
	switch {
	case err != nil:
		w.stats.Dropped.Add(int64(len(batch)))
		w.log.Error("spool write failed; events lost", "events", len(batch), "err", err)
	case w.opt.Journal:
		w.stats.Spooled.Add(int64(len(batch)))
		// Queued before inFlight clears, so the sweeper's bound never
		// passes these events before the replayer has applied them.
		w.unapplied.push(w.spool.End(), max(oldest, 1))
	default:
		if w.stats.Spooled.Add(int64(len(batch))) == int64(len(batch)) || direct {
			w.log.Warn("events now go to the spool", "events", len(batch))
		}
	}
	inFlight.Store(0)
	answer(batch, err)
	if w.opt.Journal {
		select {
		case w.wake <- struct{}{}:
		default: // the replayer is due to look already
		}
	}
}

// reportCommit counts a database commit of events begun at start: its
// time, and for the commit-size histogram the events it stored (those
// whose token no beet had are dropped inside it).
func (w *Writer) reportCommit(events []beet.Event, start time.Time, err error) {
	took := time.Since(start)
	w.stats.CommitNanos.Add(int64(took))
	if w.opt.OnCommit == nil {
		return
	}
	n := len(events)
	if err == nil {
		for i := range events {
			if events[i].BeetID == 0 {
				n--
			}
		}
	}
	w.opt.OnCommit(n, took, err == nil)
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
//
// idle is set when it runs on the tick or at Close rather than woken by an
// append: only then does the journal empty the spool once it catches up.
//
// ctx bounds its commits beside CommitTimeout (a stop's deadline).
func (w *Writer) replay(ctx context.Context, idle bool) {
	if w.opt.Journal {
		w.applyJournal(ctx, idle)
		return
	}
	if w.spool.Size() == 0 {
		return
	}
	offset := w.spool.Applied()
	for {
		end, err := w.applyFrom(ctx, offset)
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

// applyJournal applies what was appended to the journal since the last
// call: once when woken by an append (what comes meanwhile waits for the
// next wake, so that it gathers into a larger commit), and until it finds
// nothing new when idle, then empties the spool. When 1 MiB of applied
// records lie in front of the file it cuts them off, so the file stays
// small under a stream that never stops.
func (w *Writer) applyJournal(ctx context.Context, idle bool) {
	for {
		from := w.applied.Load()
		end, err := w.applyFrom(ctx, from)
		w.setApplied(end) // as far as groups went in, even on an error
		w.unapplied.popThrough(end)
		if err != nil {
			if !w.failing {
				w.log.Error("database commit failed; events wait in the journal until it is back", "err", err)
			}
			w.failing = true
			w.behind.Store(true)
			return
		}
		if w.failing || w.behind.Load() {
			w.log.Info("the journal's events go to the database again", "bytes", end-from)
		}
		w.failing = false
		w.behind.Store(false)
		head := end - w.spool.Start()
		caughtUp := end == from
		if head > 0 && (caughtUp && idle || head >= journalCompactBytes) {
			emptied, err := w.spool.TruncateIf(end)
			if err == nil && !emptied {
				_, err = w.spool.CompactTo(end, journalCompactBytes)
			}
			if err != nil {
				w.log.Error("journal truncate failed", "err", err)
				return
			}
		}
		if caughtUp || !idle {
			return
		}
	}
}

// setApplied moves the replayer's position and wakes WaitApplied.
func (w *Writer) setApplied(end int64) {
	if w.applied.Swap(end) == end {
		return
	}
	w.appliedMu.Lock()
	close(w.appliedMoved)
	w.appliedMoved = make(chan struct{})
	w.appliedMu.Unlock()
}

// WaitApplied returns once the database holds every event answered before
// it was called, or with ctx's error when ctx ends first. With Journal a
// request is answered before the replayer applies its event, so a read
// that must see the pings answered before it (read-your-writes on this
// instance) waits here; without Journal it returns at once.
func (w *Writer) WaitApplied(ctx context.Context) error {
	if !w.opt.Journal {
		return nil
	}
	target := w.spool.End()
	for {
		w.appliedMu.Lock()
		moved := w.appliedMoved
		w.appliedMu.Unlock()
		if w.applied.Load() >= target {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// applyFrom commits the spooled records from the logical offset on, in
// groups of whole records up to MaxBatch events, marks each group applied
// in the spool, and returns the offset after the last group it committed.
// With Journal the groups are the writer's own: counted and timed like
// direct commits, and an event whose token no beet has is no surprise.
func (w *Writer) applyFrom(ctx context.Context, offset int64) (int64, error) {
	group := make([]beet.Event, 0, w.opt.MaxBatch)
	done := offset
	var pendingEnd int64
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, w.opt.CommitTimeout)
		defer cancel()
		start := time.Now()
		// A durable commit: MarkApplied below may not run ahead of it.
		err := w.store.AddEvents(ctx, group, w.opt.Observe)
		if w.opt.Journal {
			w.stats.Batches.Add(1)
			w.reportCommit(group, start, err)
		}
		if err != nil {
			return err
		}
		// The commit matched each event to its beet by token; one it
		// matched to none is dropped, and noted like a live request
		// with an unknown or old token.
		w.noteUnmatched(group)
		if w.opt.Journal {
			w.stats.Committed.Add(int64(len(group)))
		} else {
			for _, e := range group {
				if e.BeetID != 0 {
					w.stats.Replayed.Add(1)
					continue
				}
				w.stats.Dropped.Add(1)
				w.log.Warn("spooled event for an unknown token dropped", "token", beet.Redact(e.Token))
			}
		}
		clear(group)
		group = group[:0]
		done = pendingEnd
		if err := w.spool.MarkApplied(done); err != nil {
			w.log.Error("spool position not written; a restart will apply these events again", "err", err)
		}
		return nil
	}
	_, err := w.spool.ReadRecords(offset, func(items []beet.Event, end int64) error {
		if len(group) > 0 && len(group)+len(items) > w.opt.MaxBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, items...)
		pendingEnd = end
		return nil
	})
	if err == nil {
		err = flush()
	}
	return done, err
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

// journalQueue holds, for each record appended to the journal and not yet
// applied, its logical end offset and the receipt time (Unix µs) of its
// oldest event, so the writer can tell the sweeper how far back events
// may still be missing from the database.
type journalQueue struct {
	mu      sync.Mutex
	records []journalRecord
}

type journalRecord struct{ end, oldest int64 }

func (q *journalQueue) push(end, oldest int64) {
	q.mu.Lock()
	q.records = append(q.records, journalRecord{end, oldest})
	q.mu.Unlock()
}

// popThrough forgets the records that end at or before end.
func (q *journalQueue) popThrough(end int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := 0
	for i < len(q.records) && q.records[i].end <= end {
		i++
	}
	if i == len(q.records) {
		q.records = q.records[:0] // keeps the array
		return
	}
	q.records = append(q.records[:0], q.records[i:]...)
}

// oldest is the earliest receipt time among the records held, 0 if none.
func (q *journalQueue) oldest() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	var o int64
	for _, r := range q.records {
		if o == 0 || r.oldest < o {
			o = r.oldest
		}
	}
	return o
}
