// Package outage logs a run of failures of one repeated step as two lines:
// its first failure, and its first success after it with how many failed
// and for how long. A background job that retries every second during a
// 30-second database outage then writes two lines, not thirty.
package outage

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Step names a step's two lines.
type Step struct {
	Failed    string // "sweep failed; retrying quietly until a sweep works"
	Recovered string // "sweeps work again"
	Warn      bool   // the Failed line at warn rather than error
}

// Log tracks one step's failures. Its zero value is ready, and it is safe
// for concurrent use.
type Log struct {
	mu    sync.Mutex
	count int
	since time.Time
}

// Note records one try of step: a failure (err != nil) is logged only
// when it starts a run of failures, with attrs; a success after failures
// is logged with their count and how long they lasted. A failure while
// ctx is done is a shutdown, not an outage, and is not logged. It reports
// whether the try worked.
func (o *Log) Note(ctx context.Context, log *slog.Logger, now time.Time, step Step, err error, attrs ...any) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		if o.count++; o.count == 1 {
			o.since = now
			level := slog.LevelError
			if step.Warn {
				level = slog.LevelWarn
			}
			log.Log(ctx, level, step.Failed, append([]any{"err", err}, attrs...)...)
		}
	case o.count > 0:
		log.InfoContext(ctx, step.Recovered, "failures", o.count, "for", now.Sub(o.since).Round(time.Millisecond))
		o.count = 0
	}
	return err == nil
}
