package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// clockEnv is an API server whose service runs on a test clock, with a
// webhook channel every new beet of account A notifies.
type clockEnv struct {
	*env
	clock *clock
	hook  channelOut
	n     byte
}

func newClockEnv(t *testing.T, engine string, at time.Time) *clockEnv {
	t.Helper()
	c := &clock{t: at}
	e := &clockEnv{env: newEnvWith(t, engine, service.Options{Now: c.now}), clock: c}
	e.hook = e.createChannel(e.keyA, map[string]any{"kind": "webhook", "name": "ops", "config": map[string]any{"url": "https://hooks.example.com/beet"}})
	return e
}

// ping records an event of the beet at the clock's time, through the
// live path (the service observes it in the commit).
func (e *clockEnv) ping(id int64) {
	e.t.Helper()
	e.n++
	ev := beet.Event{ID: beet.EventID{e.n, 0xbe}, BeetID: id, ReceivedAt: e.clock.now(), Method: "GET"}
	if err := e.store.AddEvents(context.Background(), []beet.Event{ev}, e.svc.ObserveEvents); err != nil {
		e.t.Fatal(err)
	}
}

// sweep runs one sweeper pass at the clock's time.
func (e *clockEnv) sweep() {
	e.t.Helper()
	now := e.clock.now()
	if _, _, err := e.svc.Sweep(context.Background(), now, now, 100); err != nil {
		e.t.Fatal(err)
	}
}

type beetState struct {
	Status       string     `json:"status"`
	StatusReason string     `json:"status_reason"`
	DueAt        *time.Time `json:"due_at"`
	Watching     any        `json:"watching"`
}

func (e *clockEnv) flips(id int64) []beet.FlipJSON {
	e.t.Helper()
	var out struct{ Flips []beet.FlipJSON }
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d/flips", id), nil).json(e.t, &out)
	return out.Flips
}

func period(seconds int) map[string]any {
	return map[string]any{"mode": "period", "period_seconds": seconds, "grace_seconds": 0}
}
