package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/jobs"
	"github.com/beethq/beet/internal/service"
)

// Detection timing. The sweep lag covers an event between its receipt and
// its commit; deadlines are minutes apart at the least (periods are at
// least 60 s), so a few seconds of lag cost no speed that matters.
const (
	sweepEvery = 5 * time.Second
	sweepLag   = 2 * time.Second
)

// observer hands committed events to detection off the writer's path:
// the writer enqueues each committed group, one goroutine applies them.
// pending counts groups not yet applied, so the sweeper can wait for them.
type observer struct {
	svc     *service.Service
	log     *slog.Logger
	ch      chan []beet.Event
	pending atomic.Int64
	done    chan struct{}
}

func newObserver(svc *service.Service, log *slog.Logger) *observer {
	o := &observer{svc: svc, log: log, ch: make(chan []beet.Event, 1024), done: make(chan struct{})}
	go o.run()
	return o
}

// enqueue blocks when the queue is full rather than drop events: a dropped
// group would leave its beets' deadlines behind and raise false alarms.
func (o *observer) enqueue(events []beet.Event) {
	o.pending.Add(1)
	o.ch <- events
}

func (o *observer) run() {
	defer close(o.done)
	for events := range o.ch {
		// Merge what else is queued: one pass (one read, one write) for many
		// groups when detection falls behind a burst of commits.
		merged := 1
	drain:
		for merged < 64 {
			select {
			case more, ok := <-o.ch:
				if !ok {
					break drain
				}
				events = append(events, more...)
				merged++
			default:
				break drain
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := o.svc.EventsCommitted(ctx, events); err != nil {
			o.log.Warn("detection could not follow some events", "err", err)
		}
		cancel()
		o.pending.Add(-int64(merged))
	}
}

// close applies what is queued and stops; the writer must be closed first.
func (o *observer) close() {
	close(o.ch)
	<-o.done
}

// startSweeper runs the deadline sweeper, held while ingestion catches up.
func (a *App) startSweeper() {
	s := &jobs.Sweeper{
		Sweeper: a.backend.Service,
		Ready:   func() bool { return !a.writer.Spooling() && a.observer.pending.Load() == 0 },
		Every:   sweepEvery,
		Lag:     sweepLag,
		Now:     a.now,
		Log:     a.log.With("component", "sweeper"),
	}
	a.goJob("sweeper", s.Run)
}
