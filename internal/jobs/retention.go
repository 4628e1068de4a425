// Package jobs holds Beet's background jobs. Each job has Once, one pass
// that tests call directly, and Run, a ticker loop around Once that owns
// nothing and returns when its context ends; the composition root starts
// and stops the loops.
package jobs

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/beethq/beet/internal/service"
)

// Cleaner runs one retention pass; *service.Service satisfies it.
type Cleaner interface {
	Cleanup(ctx context.Context, now time.Time, dryRun bool) (*service.CleanupReport, error)
}

// Retention deletes the events each account's plan no longer keeps, every
// Every. It reads plans afresh at each pass, so a downgrade takes effect on
// the next one.
type Retention struct {
	Cleaner Cleaner
	Every   time.Duration
	Now     func() time.Time // nil means time.Now
	Log     *slog.Logger     // nil discards
	// First is the delay of the first pass; 0 means FirstPassDelay(Every).
	First time.Duration
}

// FirstPassDelay is when the first pass comes after start: 30 s plus up to
// 30 s of jitter (so instances started together do not all clean up at
// once), and never later than every. A first pass one whole interval after
// start never came on a worker restarted more often than that.
func FirstPassDelay(every time.Duration) time.Duration {
	return min(every, 30*time.Second+rand.N(30*time.Second))
}

// Run calls Once soon after start, then every r.Every until ctx ends. A
// failed pass is logged and the loop goes on; the next tick retries.
func (r *Retention) Run(ctx context.Context) {
	first := r.First
	if first <= 0 {
		first = FirstPassDelay(r.Every)
	}
	t := time.NewTimer(first)
	select {
	case <-ctx.Done():
		t.Stop()
		return
	case <-t.C:
	}
	r.Once(ctx)
	Every(ctx, r.Every, func() { r.Once(ctx) })
}

// Every calls fn every d until ctx ends: the loop of every periodic job.
func Every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
	}
}

// Once runs one clean-up pass and logs one line with the deleted counts per
// plan (or the error). It returns the report, which may be partial on error.
func (r *Retention) Once(ctx context.Context) (*service.CleanupReport, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	rep, err := r.Cleaner.Cleanup(ctx, now(), false)
	attrs := []any{slog.Duration("duration", time.Since(start))}
	if rep != nil {
		perPlan := make([]any, 0, len(rep.Plans))
		for _, p := range rep.Plans {
			perPlan = append(perPlan, slog.Int64(string(p.Plan), p.Deleted))
		}
		attrs = append(attrs, slog.Group("deleted", perPlan...), slog.Int64("total", rep.Total))
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopped by shutdown mid-pass: the batches done stay done.
			log.InfoContext(ctx, "retention clean-up interrupted by shutdown; the next pass resumes", attrs...)
			return rep, err
		}
		log.ErrorContext(ctx, "retention clean-up failed", append(attrs, "err", err)...)
		return rep, err
	}
	log.InfoContext(ctx, "retention clean-up", attrs...)
	return rep, nil
}
