package ingest

import (
	"context"
	"errors"
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

// WriterOptions tunes group commit. Zero values take the defaults.
type WriterOptions struct {
	MaxBatch int           // events per transaction; default 256
	MaxWait  time.Duration // how long a group waits to fill; default 0: take what is queued
	// ReplayEvery is how often the spool is retried against the database.
	ReplayEvery time.Duration // default 1s
	// CommitTimeout bounds one database commit before the group goes to the spool.
	CommitTimeout time.Duration // default 5s
	// Committers is how many groups may be committing at once; default 1.
	// A database that commits concurrent transactions with one WAL flush
	// (PostgreSQL) takes the next group while the last one's flush is
	// under way; on SQLite, whose single writer would queue them, keep 1.
	Committers int
	Log        *slog.Logger
	// Observe, if set, is applied to the beets of every group inside the
	// transaction that stores it, directly or by replay (beet.Observer), so
	// detection follows every committed event at no commit of its own.
	Observe beet.Observer
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
	reqs    chan *writeReq
	done    chan struct{}

	// While the spool holds events, new ones queue behind them in the spool,
	// or the database would see them out of order. Only the writer appends
	// and only the replayer empties, so spool.Size() > 0 is the whole state.
	stopReplay chan struct{}
	replayDone chan struct{}

	// inFlight holds, for each committer, the receipt time (Unix µs) of
	// the oldest event of the group it is committing, 0 when none: events
	// queued behind them came later, so before the oldest of them
	// everything the writer took is committed.
	inFlight []atomic.Int64

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
}

type writeReq struct {
	ev     beet.Event
	beetID int64 // the beet the commit stored ev for; 0 if none (or spooled)
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
	if opt.Committers <= 0 {
		opt.Committers = 1
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{
		store: store, spool: spool, opt: opt, log: opt.Log.With("component", "writer"),
		reqs: make(chan *writeReq, 4*opt.MaxBatch), done: make(chan struct{}),
		stopReplay: make(chan struct{}), replayDone: make(chan struct{}),
		inFlight: make([]atomic.Int64, opt.Committers),
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
	w.reqs <- r
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
		close(w.reqs)
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
	for i := range w.inFlight {
		if us := w.inFlight[i].Load(); us != 0 && us < before {
			before = us
		}
	}
	if before == now.UnixMicro() {
		return now
	}
	return time.UnixMicro(before)
}

// run hands groups to the committers. It takes a group's first request,
// waits for a free committer (requests queue up meanwhile) and then takes
// all that queued, up to MaxBatch: under load the groups grow while every
// committer is busy, and when the database is idle a request is committed
// at once.
func (w *Writer) run() {
	defer close(w.done)
	free := make(chan int, w.opt.Committers)
	batches := make([][]*writeReq, w.opt.Committers)
	work := make([]chan []*writeReq, w.opt.Committers)
	var committers sync.WaitGroup
	for i := range w.opt.Committers {
		free <- i
		batches[i] = make([]*writeReq, 0, w.opt.MaxBatch)
		work[i] = make(chan []*writeReq, 1)
		// Each slot's committer lives as long as the writer: one started
		// for each commit grew its stack anew into the database driver's
		// deep calls (2% of the CPU under load).
		committers.Go(func() {
			for batch := range work[i] {
				w.commit(batch, &w.inFlight[i])
				free <- i
			}
		})
	}
	for r := range w.reqs {
		slot := <-free
		batches[slot] = w.gather(append(batches[slot][:0], r))
		work[slot] <- batches[slot]
	}
	for i := range work {
		close(work[i])
	}
	committers.Wait() // every commit under way has answered
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
func (w *Writer) gather(batch []*writeReq) []*writeReq {
	var deadline <-chan time.Time
	for len(batch) < w.opt.MaxBatch {
		select {
		case r, ok := <-w.reqs:
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
		case r, ok := <-w.reqs:
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

// commit writes one group and answers its requests.
func (w *Writer) commit(batch []*writeReq, inFlight *atomic.Int64) {
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
		err := w.store.AddEvents(ctx, events, w.opt.Observe)
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
					r.errc <- ErrStaleToken
				case events[i].BeetID == 0:
					r.errc <- ErrNoBeet
				default:
					r.errc <- nil
				}
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
