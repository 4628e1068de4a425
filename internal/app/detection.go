package app

import (
	"context"
	"sync"
	"time"

	"github.com/beethq/beet/internal/jobs"
)

// Detection timing. Events are applied to their beets inside the commit
// that stores them; the sweep lag covers an event between its receipt and
// the writer taking it. Deadlines are minutes apart at the least (periods
// are at least 60 s), so a few seconds of lag cost no speed that matters.
const sweepLag = 2 * time.Second

// startSweeper runs the deadline sweeper. It sweeps only deadlines before
// the oldest event the writer is still committing, and holds while the
// spool has events (their times are not known until replay). A worker-only
// instance has no writer of its own: it keeps the fixed lag, which covers
// the other instances' commit groups (milliseconds each).
//
// After sweeps failed (the database was away), deadlines that passed
// since the last pass that worked wait outageHold more: the ingest
// instances retry their spools every second, and a ping spooled during
// the outage must reach its beet before the sweeper calls it late.
func (a *App) startSweeper() {
	a.goJob("sweeper", a.newSweeper(a.backend.Service).Run)
}

// newSweeper is the sweeper startSweeper runs, on ds.
func (a *App) newSweeper(ds jobs.DeadlineSweeper) *jobs.Sweeper {
	metrics := a.observeSweep()
	hold := &sweepHold{hold: outageHold, log: a.log.With("component", "sweeper")}
	s := &jobs.Sweeper{
		Sweeper: ds,
		Every:   a.cfg.SweepInterval,
		Lag:     sweepLag,
		Now:     a.now,
		Log:     a.log.With("component", "sweeper"),
		Observe: func(n int, took time.Duration, err error) {
			metrics(n, took, err)
			hold.observe(a.now(), err)
		},
		Watermark: hold.watermark,
	}
	if a.writer != nil {
		s.Ready = func() bool { return !a.writer.Spooling() }
		s.Watermark = func(now time.Time) time.Time {
			return minTime(hold.watermark(now), a.writer.CommittedBefore(now))
		}
	}
	return s
}

// outageHold is how long, after sweeps work again, deadlines that passed
// while they failed stay unswept: ten of the ingest writers' replay
// intervals (1 s). Periods are a minute at the least.
const outageHold = 10 * time.Second

// sweepHold holds the sweeper's watermark where the last pass that
// worked before an outage left it, until hold after the outage ends.
type sweepHold struct {
	hold time.Duration
	log  interface{ Info(string, ...any) }

	mu      sync.Mutex
	lastOK  time.Time // the last pass that worked, outside a hold
	failing bool
	heldAt  time.Time // zero when not holding
	until   time.Time // the hold's end, once sweeps work again
}

// observe takes the result of a pass that ran at now.
func (h *sweepHold) observe(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if !h.failing && h.heldAt.IsZero() {
			h.heldAt = h.lastOK
			if h.heldAt.IsZero() { // no pass has worked since start
				h.heldAt = now
			}
		}
		h.failing = true
		return
	}
	if h.failing {
		h.failing = false
		h.until = now.Add(h.hold)
		h.log.Info("deadlines that passed during the outage wait for the spools' replay", "hold", h.hold, "since", h.heldAt)
	}
	if !h.heldAt.IsZero() && now.Before(h.until) {
		return
	}
	h.heldAt = time.Time{}
	h.lastOK = now
}

// watermark is the sweeper's watermark at now: where the hold keeps it,
// or now.
func (h *sweepHold) watermark(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.heldAt.IsZero() && (h.failing || now.Before(h.until)) {
		return h.heldAt.Add(-sweepLag)
	}
	return now
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// maintenanceEvery is how often an instance with ingestion reloads the
// maintenance windows detection reads inside its commits: under the
// service's 10 s freshness bound, so the copy is never older than that.
const maintenanceEvery = 5 * time.Second

// startMaintenance keeps the copy of the maintenance windows fresh on an
// instance with ingestion: loaded at start, then every maintenanceEvery.
// Its sweeps refresh it too, but an ingest instance runs none, and the
// sweeper holds while the spool has events, when the replay detects.
func (a *App) startMaintenance() {
	svc := a.backend.Service
	a.goJob("maintenance", func(ctx context.Context) {
		svc.RefreshMaintenance(ctx)
		jobs.Every(ctx, maintenanceEvery, func() { svc.RefreshMaintenance(ctx) })
	})
}
