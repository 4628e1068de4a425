package jobs

import (
	"context"
	"log/slog"
	"time"
)

// Partitions keeps the time partitions of the events table (PostgreSQL)
// made ahead of time: Ensure creates the ones from now's month to a few
// months later and gives rows that fell into the default partition a
// partition of their own. Ensure is safe on many instances at once (the
// store serialises it with an advisory lock); its state is read for the
// metrics by the store, not kept here.
type Partitions struct {
	Ensure func(ctx context.Context, now time.Time) error
	Every  time.Duration
	Now    func() time.Time // nil means time.Now
	Log    *slog.Logger     // nil discards
}

// Run calls Once at start and then every p.Every until ctx ends: an
// instance started after a long stop makes the missing months at once.
func (p *Partitions) Run(ctx context.Context) {
	p.Once(ctx)
	Every(ctx, p.Every, func() { p.Once(ctx) })
}

// Once runs Ensure and logs a failure; the next tick retries.
func (p *Partitions) Once(ctx context.Context) error {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	err := p.Ensure(ctx, now())
	if err != nil && ctx.Err() == nil && p.Log != nil {
		p.Log.ErrorContext(ctx, "events partitions not made ahead", "err", err)
	}
	return err
}
