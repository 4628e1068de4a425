package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/beethq/beet/internal/outage"
)

// DeadlineSweeper is what the sweeper drives; *service.Service satisfies it.
type DeadlineSweeper interface {
	Sweep(ctx context.Context, now, watermark time.Time, limit int) (flipped, examined int, err error)
}

// Sweeper evaluates the beets whose deadline has passed, every Every. It
// never scans all beets: the store hands it only the due ones.
//
// It does not alert on our own trouble: it sweeps only while Ready (the
// ingestion spool is empty), and only deadlines before a watermark: Lag
// behind now, which covers an event in flight between receipt and commit,
// and no later than Watermark says every committed event is observed.
type Sweeper struct {
	Sweeper   DeadlineSweeper
	Ready     func() bool                   // nil means always
	Watermark func(now time.Time) time.Time // nil means now
	Every     time.Duration
	Lag       time.Duration
	Batch     int
	Now       func() time.Time // nil means time.Now
	Log       *slog.Logger     // nil discards
	// Observe, if set, is told each pass that ran: beets flipped, how long
	// it took, and its error (metrics).
	Observe func(flipped int, took time.Duration, err error)

	// An outage is two lines, its first failed pass and the first pass
	// that works after it (with the count), not an error every pass.
	passes outage.Log
}

// sweepStep names the sweeper's outage lines.
var sweepStep = outage.Step{Failed: "sweep failed; retrying quietly until a sweep works", Recovered: "sweeps work again"}

// Run calls Once every s.Every until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	Every(ctx, s.Every, func() { s.Once(ctx) })
}

// Once sweeps every due beet, a batch at a time, and returns how many
// flipped. It does nothing while the ingestion path is not caught up.
func (s *Sweeper) Once(ctx context.Context) (int, error) {
	start := time.Now()
	n, ran, err := s.once(ctx)
	if ran && s.Observe != nil {
		s.Observe(n, time.Since(start), err)
	}
	return n, err
}

// once is Once; ran is false when the pass was held.
func (s *Sweeper) once(ctx context.Context) (int, bool, error) {
	log := s.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.Ready != nil && !s.Ready() {
		log.DebugContext(ctx, "sweep held: ingestion is catching up")
		return 0, false, nil
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	batch := s.Batch
	if batch <= 0 {
		batch = 500
	}
	total := 0
	// Bounded: a beet whose evaluation fails keeps its deadline and would be
	// handed back again; the next tick retries it.
	for range maxBatchesPerSweep {
		n, examined, err := s.Sweeper.Sweep(ctx, now, s.watermark(now), batch)
		total += n
		if err != nil {
			s.passes.Note(ctx, log, now, sweepStep, err, "flipped", total)
			return total, true, err
		}
		// Every examined beet was flipped or had its deadline moved, so a
		// full batch may have more due behind it; a short one was the last.
		if examined < batch {
			s.passes.Note(ctx, log, now, sweepStep, nil)
			if total > 0 {
				log.InfoContext(ctx, "sweep", "flipped", total)
			}
			return total, true, nil
		}
	}
	return total, true, nil
}

const maxBatchesPerSweep = 100

func (s *Sweeper) watermark(now time.Time) time.Time {
	w := now.Add(-s.Lag)
	if s.Watermark != nil {
		if o := s.Watermark(now); o.Before(w) {
			w = o
		}
	}
	return w
}
