package app

import (
	"context"
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
func (a *App) startSweeper() {
	s := &jobs.Sweeper{
		Sweeper: a.backend.Service,
		Every:   a.cfg.SweepInterval,
		Lag:     sweepLag,
		Now:     a.now,
		Log:     a.log.With("component", "sweeper"),
		Observe: a.observeSweep(),
	}
	if a.writer != nil {
		s.Ready = func() bool { return !a.writer.Spooling() }
		s.Watermark = a.writer.CommittedBefore
	}
	a.goJob("sweeper", s.Run)
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
