package app

import (
	"context"
	"log/slog"
	"sync"
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
// oldest lets the sweeper stay behind every event not yet applied.
type observer struct {
	svc  *service.Service
	log  *slog.Logger
	ch   chan []beet.Event
	done chan struct{}

	mu     sync.Mutex
	oldest []time.Time // earliest receipt time of each queued group, in queue order
}

func newObserver(svc *service.Service, log *slog.Logger) *observer {
	o := &observer{svc: svc, log: log, ch: make(chan []beet.Event, 1024), done: make(chan struct{})}
	go o.run()
	return o
}

// enqueue blocks when the queue is full rather than drop events: a dropped
// group would leave its beets' deadlines behind and raise false alarms.
func (o *observer) enqueue(events []beet.Event) {
	first := events[0].ReceivedAt
	for _, e := range events[1:] {
		if e.ReceivedAt.Before(first) {
			first = e.ReceivedAt
		}
	}
	o.mu.Lock()
	o.oldest = append(o.oldest, first)
	o.mu.Unlock()
	o.ch <- events
}

// appliedBefore is the instant before which every committed event has
// been applied: the earliest receipt time still queued, or now.
func (o *observer) appliedBefore(now time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.oldest) > 0 && o.oldest[0].Before(now) {
		return o.oldest[0]
	}
	return now
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
		o.mu.Lock()
		o.oldest = o.oldest[merged:]
		o.mu.Unlock()
	}
}

// close applies what is queued and stops; the writer must be closed first.
func (o *observer) close() {
	close(o.ch)
	<-o.done
}

// startSweeper runs the deadline sweeper. It sweeps only deadlines before
// every queued event, and holds while the spool has events (their times
// are not known until replay).
func (a *App) startSweeper() {
	s := &jobs.Sweeper{
		Sweeper: a.backend.Service,
		Ready:   func() bool { return !a.writer.Spooling() },
		Watermark: func(now time.Time) time.Time {
			return a.observer.appliedBefore(now)
		},
		Every: sweepEvery,
		Lag:   sweepLag,
		Now:   a.now,
		Log:   a.log.With("component", "sweeper"),
	}
	a.goJob("sweeper", s.Run)
}
