package notify

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/outage"
)

// Store is what the worker reads and writes.
type Store interface {
	beet.DeliveryStore
	FindChannelByID(ctx context.Context, id int64) (*beet.Channel, error)
	FindBeetByID(ctx context.Context, id int64) (*beet.Beet, error)
	// CreateSettled adds one beet.EventSettled delivery per (channel, beet)
	// whose newest flapping notice is no longer pending (a suppressed one
	// too) and was followed by no sent message about a flip, once the beet has not flipped for quiet; it is idempotent
	// across instances and returns how many it added.
	CreateSettled(ctx context.Context, now time.Time, quiet time.Duration) (int, error)
	// FindOpenFlapping returns the newest flapping notice of the channel
	// and beet before delivery beforeID if no message about a flip was
	// sent after it, or nil.
	FindOpenFlapping(ctx context.Context, channelID, beetID, beforeID int64) (*beet.Delivery, error)
	// IncidentSent reports whether a message of the incident that flip
	// incidentFlipID opened went out to the channel (delivered or failed,
	// not suppressed) before delivery beforeID.
	IncidentSent(ctx context.Context, channelID, incidentFlipID, beforeID int64) (bool, error)
}

// Maintenance answers whether a beet is in a maintenance window at t;
// *service.Service satisfies it.
type Maintenance interface {
	InMaintenance(ctx context.Context, beetID int64, t time.Time) (bool, error)
}

// Worker drains the outbox: it claims due deliveries, sends them, and
// records each outcome. Several workers (on several instances) can run
// against one database; the claim makes each delivery theirs alone until
// its lease ends.
type Worker struct {
	Store       Store
	Sender      *Sender
	Maintenance Maintenance // nil: no windows
	BaseURL     string
	Now         func() time.Time // nil: time.Now
	Log         *slog.Logger     // nil discards

	Every time.Duration // how often to look for due deliveries; default 1s
	Lease time.Duration // how long a claim holds; default 2m (well over a send's 30 s limit)
	Batch int           // deliveries claimed (and sent concurrently) at once; default 16
	// SlowAfter: a send still waiting for its receiver after this long
	// gives its slot to the next delivery and goes on outside the Batch,
	// up to 4 × Batch such slow sends at once; default 5s.
	SlowAfter   time.Duration
	BackoffBase time.Duration // first retry delay; default 30s, doubling
	BackoffMax  time.Duration // longest retry delay; default 1h
	GiveUpAfter time.Duration // retries stop this long after the first attempt; default 24h
	// FlapLimit: a beet with more than this many alerting flips in an hour
	// is flapping; default 6.
	FlapLimit int
	// ReminderEvery is how often reminders (and settled beets) are looked
	// for; default 1m.
	ReminderEvery time.Duration
	// SettleAfter: a beet reported flapping that has not flipped for this
	// long has settled, and each channel that got the flapping notice is
	// told its state once; default 1h (the flapping window).
	SettleAfter time.Duration
	// Keep is how long finished deliveries stay in the log; default 30 days.
	Keep time.Duration
	// PruneBatch is how many finished deliveries one delete removes;
	// default 10,000. Prune deletes batch after batch until none is left.
	PruneBatch int
	// Observe, if set, is told each outcome: delivered, retry, failed or
	// suppressed, with the send's latency (for metrics).
	Observe func(kind beet.ChannelKind, outcome string, latency time.Duration)
}

// Defaults.
const (
	DefaultLease       = 2 * time.Minute
	DefaultBackoffBase = 30 * time.Second
	DefaultBackoffMax  = time.Hour
	DefaultGiveUp      = 24 * time.Hour
	DefaultFlapLimit   = 6
	DefaultSettleAfter = time.Hour
	maxRetryAfter      = 6 * time.Hour
	sendTimeout        = 30 * time.Second
)

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Worker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run sends due deliveries every w.Every, creates reminders every
// w.ReminderEvery and prunes the log hourly, until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	// An outage is two lines a step, not one a second.
	var claims, reminders, settled, pruning outage.Log
	note := func(o *outage.Log, what string, err error) bool {
		return o.Note(ctx, w.log(), w.now(), outage.Step{Failed: "notify: " + what + " failed; retrying quietly until it works again",
			Recovered: "notify: " + what + " works again"}, err)
	}
	poll := time.NewTicker(or(w.Every, time.Second))
	defer poll.Stop()
	// A pool of Batch slots, refilled as each send ends: a slow receiver
	// holds its own slot until the send limit, never the others' sends.
	p := w.newPool()
	defer p.wg.Wait()
	remind := time.NewTicker(or(w.ReminderEvery, time.Minute))
	defer remind.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			note(&claims, "claiming deliveries", w.fill(ctx, p))
		case <-p.freed:
			note(&claims, "claiming deliveries", w.fill(ctx, p))
		case <-remind.C:
			if n, err := w.Store.CreateReminders(ctx, w.now()); note(&reminders, "creating reminders", err) && n > 0 {
				w.log().Info("notify: reminders queued", "count", n)
			}
			if n, err := w.CreateSettled(ctx); note(&settled, "queueing settled messages", err) && n > 0 {
				w.log().Info("notify: settled messages queued", "count", n)
			}
		case <-prune.C:
			if n, err := w.Prune(ctx); note(&pruning, "pruning the delivery log", err) && n > 0 {
				w.log().Info("notify: delivery log pruned", "deleted", n)
			}
		}
	}
}

// errInterrupted is a delivery's note when its attempt was cut short
// here (the instance stopping, or a channel test's request cancelled)
// before the receiver answered: no failure, it is tried again.
const errInterrupted = "interrupted before the receiver answered; tried again"

// maxPruneTime bounds one hourly prune: a log far behind catches up over
// a few hours rather than holding the database in one long pass.
const maxPruneTime = 5 * time.Minute

// Prune deletes the finished deliveries older than w.Keep, in batches of
// w.PruneBatch until a batch comes back short (or maxPruneTime has gone),
// so an installation that finishes more than a batch an hour keeps up.
// It returns how many it deleted.
func (w *Worker) Prune(ctx context.Context) (int, error) {
	batch, before, start := or(w.PruneBatch, 10000), w.now().Add(-or(w.Keep, 30*24*time.Hour)), time.Now()
	total := 0
	for {
		n, err := w.Store.DeleteDeliveriesBefore(ctx, before, batch)
		total += n
		if err != nil || n < batch || time.Since(start) > maxPruneTime || ctx.Err() != nil {
			return total, err
		}
	}
}

// pool is the sends in flight: one token in slots per send, or in slow
// per send that outlasted SlowAfter. A receiver that hangs holds a slot
// for SlowAfter, not the send limit: Batch hanging receivers no longer
// hold up every other channel's alerts for 30 s at a time.
type pool struct {
	slots     chan struct{}
	slow      chan struct{}
	slowAfter time.Duration
	freed     chan struct{} // signalled (coalesced) when a slot frees
	wg        sync.WaitGroup
}

func (w *Worker) newPool() *pool {
	n := or(w.Batch, 16)
	return &pool{slots: make(chan struct{}, n), slow: make(chan struct{}, 4*n),
		slowAfter: or(w.SlowAfter, DefaultSlowAfter), freed: make(chan struct{}, 1)}
}

// DefaultSlowAfter is Worker.SlowAfter's default: a receiver answers in
// well under a second as a rule.
const DefaultSlowAfter = 5 * time.Second

// send runs fn (one send) in the pool, in a slot taken by the caller. If
// fn outlasts slowAfter and there is room among the slow sends, its slot
// is given back at once and it goes on as a slow send.
func (p *pool) send(fn func()) {
	const (
		running = iota
		slowed  // its slot given back; it holds a token in slow
		ended
	)
	var state atomic.Int32
	freeSlot := func() {
		<-p.slots
		select {
		case p.freed <- struct{}{}:
		default:
		}
	}
	p.wg.Go(func() {
		t := time.AfterFunc(p.slowAfter, func() {
			select {
			case p.slow <- struct{}{}:
				if state.CompareAndSwap(running, slowed) {
					freeSlot()
				} else {
					<-p.slow // it ended meanwhile
				}
			default: // as many slow sends as allowed: it keeps its slot
			}
		})
		defer func() {
			t.Stop()
			if state.CompareAndSwap(running, ended) {
				freeSlot()
			} else {
				<-p.slow
			}
		}()
		fn()
	})
}

// fill claims as many due deliveries as there are free slots and starts
// each send at once, until a claim comes back short. Only Run's goroutine
// calls it, so the free count can only grow while it runs. Claims stay
// exclusive across instances (ClaimDeliveries).
func (w *Worker) fill(ctx context.Context, p *pool) error {
	for ctx.Err() == nil {
		free := cap(p.slots) - len(p.slots)
		if free == 0 {
			return nil
		}
		n, err := w.claimAndSend(ctx, p, free)
		if err != nil || n < free {
			return err
		}
	}
	return nil
}

// claimAndSend claims up to n due deliveries and starts a send of each in
// p; it returns how many it claimed.
func (w *Worker) claimAndSend(ctx context.Context, p *pool, n int) (int, error) {
	ds, err := w.Store.ClaimDeliveries(ctx, w.now(), or(w.Lease, DefaultLease), n)
	if err != nil {
		return 0, err
	}
	for _, d := range ds {
		p.slots <- struct{}{}
		p.send(func() { w.process(ctx, d) })
	}
	return len(ds), nil
}

// CreateSettled queues the settled message of every beet reported
// flapping that has been quiet for SettleAfter (see Store.CreateSettled);
// Run calls it with the reminders.
func (w *Worker) CreateSettled(ctx context.Context) (int, error) {
	return w.Store.CreateSettled(ctx, w.now(), or(w.SettleAfter, DefaultSettleAfter))
}

// Once claims one batch of due deliveries, sends them concurrently and
// waits for all of them; it returns how many it claimed. Run does not use
// it: it refills a pool of sends as each one ends (fill).
func (w *Worker) Once(ctx context.Context) (int, error) {
	p := w.newPool()
	n, err := w.claimAndSend(ctx, p, cap(p.slots))
	p.wg.Wait()
	return n, err
}

// DeliverNow sends one pending delivery at once (a test message) and
// returns it as recorded.
func (w *Worker) DeliverNow(ctx context.Context, id int64) (*beet.Delivery, error) {
	d, err := w.Store.ClaimDelivery(ctx, id, w.now(), or(w.Lease, DefaultLease))
	if err != nil {
		return nil, err
	}
	w.process(ctx, d)
	return w.Store.FindDeliveryByID(ctx, id)
}

// process sends one claimed delivery and records the outcome.
func (w *Worker) process(ctx context.Context, d *beet.Delivery) {
	log := w.log().With("delivery_id", d.ID, "channel_id", d.ChannelID, "event", d.Event, "attempt", d.Attempts)
	res := beet.DeliveryResult{ID: d.ID, Attempts: d.Attempts}
	// The whole attempt, reading what to send included, ends within half
	// the lease: past it another instance may claim the delivery and send
	// it again.
	actx, cancelAttempt := context.WithTimeout(ctx, or(w.Lease, DefaultLease)/2)
	defer cancelAttempt()
	msg, ch, skip, err := w.prepare(actx, d)
	observe := true
	switch {
	case beet.IsNotFound(err):
		// The beet or flip was deleted while the delivery waited: there
		// is nothing left to tell, and the channel is not at fault.
		res.Status, res.Error = beet.DeliveryFailed, "not sent: "+beet.ErrorMessage(err)
		observe = false
	case err != nil && ctx.Err() != nil:
		res.Status, res.Error, res.NextAt = beet.DeliveryPending, errInterrupted, w.now()
		observe = false
	case err != nil:
		// Reading what to send failed (the database, or a channel secret
		// this installation cannot open). It is a failed attempt like a
		// send's: retried with backoff, given up on after GiveUpAfter
		// (marking the channel failing), and counted in the metrics.
		w.classify(d, errors.New("preparing the message: "+err.Error()), &res)
		log.Warn("notify: could not prepare a delivery", "err", err, "status", res.Status)
	case skip != "":
		res.Status, res.Error = beet.DeliverySuppressed, skip
		log.Info("notify: delivery suppressed", "why", skip)
	default:
		sctx, cancel := context.WithTimeout(actx, sendTimeout)
		start := time.Now()
		err := w.Sender.Send(sctx, ch, msg)
		res.Latency = time.Since(start)
		cancel()
		if err != nil && ctx.Err() != nil {
			// Shutting down: let the lease lapse, or take it up at once on
			// restart, rather than count a failure the receiver never saw.
			res.Status, res.Error, res.NextAt = beet.DeliveryPending, errInterrupted, w.now()
			observe = false
			break
		}
		w.classify(d, err, &res)
		attrs := []any{"kind", ch.Kind, "latency_ms", res.Latency.Milliseconds(), "status", res.Status}
		if err != nil {
			attrs = append(attrs, "err", logText(err)) // SendError texts carry masked URLs only
		}
		var se *SendError
		switch {
		case res.Status == beet.DeliveryDelivered:
			log.Info("notify: delivered", attrs...)
		case errors.As(err, &se) && se.Installation:
			log.Error("notify: this installation could not send a delivery; fix its settings", attrs...)
		default:
			log.Warn("notify: delivery failed", attrs...)
		}
	}
	res.At = w.now()
	if w.Observe != nil && observe {
		outcome := string(res.Status)
		if res.Status == beet.DeliveryPending {
			outcome = "retry"
		}
		// A channel that could not be read has no kind to count under.
		kind := beet.ChannelKind("unknown")
		if ch != nil {
			kind = ch.Kind
		}
		w.Observe(kind, outcome, res.Latency)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if ok, err := w.Store.RecordDelivery(rctx, res); err != nil {
		log.Error("notify: recording a delivery failed; it will be sent again when its lease ends", "err", err)
	} else if !ok {
		log.Warn("notify: a delivery's lease ran out before its result was recorded; another attempt owns it")
	}
}

// classify turns a send's error into the recorded result.
func (w *Worker) classify(d *beet.Delivery, err error, res *beet.DeliveryResult) {
	if err == nil {
		res.Status = beet.DeliveryDelivered
		return
	}
	res.Error = err.Error()
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Msg: err.Error()}
	}
	now := w.now()
	// The day of retries starts at the first attempt, not at the flip: an
	// alert written late (after an outage of the workers) still gets it.
	since := d.CreatedAt
	if d.FirstAt != nil {
		since = *d.FirstAt
	}
	switch {
	case se.Permanent && !se.Installation:
		res.Status, res.ChannelFailing = beet.DeliveryFailed, true
	case now.Sub(since) >= or(w.GiveUpAfter, DefaultGiveUp):
		// A fault of this installation's is not the channel's.
		res.Status, res.ChannelFailing = beet.DeliveryFailed, !se.Installation
		res.Error = "gave up after " + detect.Duration(or(w.GiveUpAfter, DefaultGiveUp)) + " of retries: " + res.Error
	default:
		res.Status = beet.DeliveryPending
		// A receiver's Retry-After can put the retry later, never sooner
		// than the backoff: "Retry-After: 1" on a maintenance page would
		// otherwise bring a retry every second for a day.
		delay := w.backoff(d.Attempts)
		if se.RetryAfter > 0 {
			delay = max(delay, min(se.RetryAfter, maxRetryAfter))
		}
		res.NextAt = now.Add(delay)
	}
}

// backoff is the delay after the given attempt: the base doubled each
// attempt up to the maximum, with jitter over its upper half so that
// retries from many deliveries do not arrive together.
func (w *Worker) backoff(attempt int) time.Duration {
	base, ceiling := or(w.BackoffBase, DefaultBackoffBase), or(w.BackoffMax, DefaultBackoffMax)
	d := base
	for i := 1; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1)
}

// prepare loads what delivery d is about and decides whether it is sent:
// skip says why not (maintenance, flapping).
func (w *Worker) prepare(ctx context.Context, d *beet.Delivery) (*Message, *beet.Channel, string, error) {
	ch, err := w.Store.FindChannelByID(ctx, d.ChannelID)
	if err != nil {
		return nil, nil, "", err
	}
	now := w.now()
	// The message is written as of its first attempt (set by the first
	// claim): "down since …, 12 min ago" then tells how late it went out,
	// and every retry sends the same words under the same idempotency key.
	// The delivery's creation is the flip's own time for a first alert,
	// which would say "under a minute ago" however late it was sent.
	written := d.CreatedAt
	if d.FirstAt != nil {
		written = *d.FirstAt
	}
	if written.IsZero() {
		written = now
	}
	if d.Event == beet.EventTest {
		return render(d, nil, nil, nil, w.BaseURL, written), ch, "", nil
	}
	b, err := w.Store.FindBeetByID(ctx, d.BeetID)
	if err != nil {
		return nil, ch, "", err
	}
	f, err := w.Store.FindFlipByID(ctx, d.FlipID)
	if err != nil {
		return nil, ch, "", err
	}
	incident := f
	if d.IncidentFlipID != 0 && d.IncidentFlipID != f.ID {
		if incident, err = w.Store.FindFlipByID(ctx, d.IncidentFlipID); err != nil {
			return nil, ch, "", err
		}
	}
	// A flip is judged at its own time; a reminder or a settled message (about
	// an old flip) at the time it is sent.
	at := f.At
	if d.Reminder > 0 || d.Event == beet.EventSettled {
		at = now
	}
	if w.Maintenance != nil {
		in, err := w.Maintenance.InMaintenance(ctx, b.ID, at)
		if err != nil {
			return nil, ch, "", err
		}
		// A window holds back alerts, not the end of one the receiver
		// already has: a recovery or pause whose incident was sent still
		// goes out, or the page (PagerDuty, Opsgenie) stays open for good.
		if in && d.Reminder == 0 && (d.Event == beet.EventUp || d.Event == beet.EventPaused) {
			sent, err := w.Store.IncidentSent(ctx, d.ChannelID, d.IncidentFlipID, d.ID)
			if err != nil {
				return nil, ch, "", err
			}
			in = !sent
		}
		// Likewise a settled message whose flapping notice went out, or
		// the receiver is left believing the beet still flaps. Its own
		// incident may be one that was never sent (the beet's current
		// one, when it settled down), so it asks about the notice, not
		// the incident. CreateSettled takes a notice that is merely no
		// longer pending, and a notice can be suppressed (a window that
		// began meanwhile held back its retry), so the status is checked.
		if in && d.Event == beet.EventSettled {
			notice, err := w.Store.FindOpenFlapping(ctx, d.ChannelID, d.BeetID, d.ID)
			if err != nil {
				return nil, ch, "", err
			}
			in = notice == nil || (notice.Status != beet.DeliveryDelivered && notice.Status != beet.DeliveryFailed)
		}
		if in {
			return nil, ch, "maintenance window: recorded, not sent", nil
		}
	}
	// Pauses and settled messages end a flapping run: never suppressed.
	if d.Reminder == 0 && d.Event != beet.EventPaused && d.Event != beet.EventSettled {
		since := f.At.Add(-time.Hour)
		n, err := w.Store.CountNotifiedFlips(ctx, b.ID, since, f.At)
		if err != nil {
			return nil, ch, "", err
		}
		if n > or(w.FlapLimit, DefaultFlapLimit) {
			first, err := w.Store.MarkFlapping(ctx, d.ID, since)
			if err != nil {
				return nil, ch, "", err
			}
			if !first {
				return nil, ch, "flapping: one notice was sent; quiet until it settles", nil
			}
			d.Flapping = true
		}
	}
	m := render(d, b, f, incident, w.BaseURL, written)
	if d.Reminder == 0 {
		// The first message sent after a flapping notice also closes the
		// incident that notice opened, when it is another one (flips in
		// between were suppressed, their recoveries with them).
		open, err := w.Store.FindOpenFlapping(ctx, d.ChannelID, d.BeetID, d.ID)
		if err != nil {
			return nil, ch, "", err
		}
		if open != nil && (open.Event == beet.EventDown || open.Event == beet.EventAnomalous) &&
			open.IncidentKey() != m.IncidentKey {
			m.ResolvesIncidentKey = open.IncidentKey()
		}
	}
	return m, ch, "", nil
}
