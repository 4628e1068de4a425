package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// TestResumeOfABeetNotPaused: resume of a beet that is not paused changes
// nothing, however often it is called: the silence alert comes when the
// last event says, and names it.
func TestResumeOfABeetNotPaused(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 17, 43, 34, 748202000, time.UTC)
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "res", "detection": period(60)})
			e.ping(b.ID)
			path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
			for _, after := range []time.Duration{40 * time.Second, 55 * time.Second} {
				e.clock.set(t0.Add(after))
				var got beetState
				e.do(e.keyA, "POST", path+"/resume", nil).json(t, &got)
				if due := t0.Add(time.Minute); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(due) {
					t.Fatalf("resume %v after the event: %+v, want up and due still at %v", after, got, due)
				}
			}
			e.clock.set(t0.Add(61 * time.Second))
			e.sweep()
			f := e.flips(b.ID)
			want := "No event since Dec 4 17:43 UTC (1 min); expected one at least every 1 min."
			if len(f) != 2 || f[0].To != "down" || !f[0].At.Equal(t0.Add(time.Minute)) || f[0].Reason != want {
				t.Fatalf("flips %+v; want down at %v: %q", f, t0.Add(time.Minute), want)
			}
		})
	}
}

// TestResumeGraceNamesTheLastEvent: a resumed beet gets its period from
// the resume, as documented, but the silence it then flags names the
// last event, not the resume.
func TestResumeGraceNamesTheLastEvent(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 17, 43, 34, 748202000, time.UTC)
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "paused", "detection": period(60)})
			e.ping(b.ID)
			path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
			e.clock.set(t0.Add(10 * time.Second))
			e.do(e.keyA, "POST", path+"/pause", nil)
			resumed := t0.Add(5 * time.Minute)
			e.clock.set(resumed)
			var got beetState
			e.do(e.keyA, "POST", path+"/resume", nil).json(t, &got)
			if due := resumed.Add(time.Minute); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(due) {
				t.Fatalf("after resume: %+v, want up and due at %v", got, due)
			}
			e.clock.set(resumed.Add(61 * time.Second))
			e.sweep()
			f := e.flips(b.ID)
			want := "No event since Dec 4 17:43 UTC (6 min); expected one at least every 1 min."
			if len(f) != 4 || f[0].To != "down" || f[0].Reason != want {
				t.Fatalf("flips %+v; want down: %q", f, want)
			}
		})
	}
}

// TestResumeOnEvent: a paused beet with resume_on_event (created with it,
// or set by PATCH) is resumed by its next event, which then counts as any
// event: up, with its deadline from the event; without it, an event is
// recorded and the beet stays paused (CONTRACT §2).
func TestResumeOnEvent(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 17, 43, 34, 748202000, time.UTC)
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			var got struct {
				beetState
				ResumeOnEvent bool       `json:"resume_on_event"`
				LastEventAt   *time.Time `json:"last_event_at"`
			}
			b := e.createBeet(e.keyA, map[string]any{"name": "wakes", "detection": period(60), "resume_on_event": true})
			path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if !got.ResumeOnEvent {
				t.Fatalf("created with resume_on_event: %+v", got)
			}
			e.do(e.keyA, "POST", path+"/pause", nil)
			e.clock.set(t0.Add(time.Minute))
			e.ping(b.ID)
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if due := t0.Add(2 * time.Minute); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(due) {
				t.Fatalf("a paused beet with resume_on_event after an event: %+v, want up, due at %v", got, due)
			}
			f := e.flips(b.ID)
			if len(f) != 3 || f[1].From != "paused" || f[1].To != "new" || f[1].Kind != "manual" || f[0].To != "up" {
				t.Fatalf("flips %+v; want paused→new (resumed by the event), new→up", f)
			}

			// Off by PATCH: an event leaves a paused beet paused.
			e.do(e.keyA, "PATCH", path, map[string]any{"resume_on_event": false}).json(t, &got)
			if got.ResumeOnEvent {
				t.Fatalf("PATCH resume_on_event false: %+v", got)
			}
			e.do(e.keyA, "POST", path+"/pause", nil)
			e.clock.set(t0.Add(2 * time.Minute))
			e.ping(b.ID)
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if got.Status != "paused" || got.LastEventAt == nil || !got.LastEventAt.Equal(t0.Add(2*time.Minute)) {
				t.Fatalf("resume_on_event off: %+v, want paused with the event recorded", got)
			}
			// On again by PATCH: the next event resumes it (up: it has events).
			e.do(e.keyA, "PATCH", path, map[string]any{"resume_on_event": true})
			e.clock.set(t0.Add(3 * time.Minute))
			e.ping(b.ID)
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if got.Status != "up" {
				t.Fatalf("resume_on_event on again: %+v, want up", got)
			}
			if f := e.flips(b.ID); f[0].From != "paused" || f[0].To != "up" || !strings.Contains(f[0].Reason, "resume_on_event") {
				t.Fatalf("newest flip %+v; want paused→up naming resume_on_event", f[0])
			}
		})
	}
}

// TestResumeKeepsAnOpenRunsLimit: a beet paused while a run with a time
// limit is open, and resumed before the limit ends, keeps the limit's end
// as its deadline (the mode's deadline from the resume would be later):
// the run still overruns when it would have.
func TestResumeKeepsAnOpenRunsLimit(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			det := period(3600)
			det["max_runtime_seconds"] = 600
			b := e.createBeet(e.keyA, map[string]any{"name": "job", "detection": det})
			e.ping(b.ID)
			e.clock.set(t0.Add(time.Minute))
			e.n++
			start := beet.Event{ID: beet.EventID{e.n, 0xbe}, BeetID: b.ID, ReceivedAt: e.clock.now(), Method: "GET", Kind: beet.KindStart}
			if err := e.store.AddEvents(context.Background(), []beet.Event{start}, e.svc.ObserveEvents); err != nil {
				t.Fatal(err)
			}
			path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
			e.clock.set(t0.Add(2 * time.Minute))
			e.do(e.keyA, "POST", path+"/pause", nil)
			e.clock.set(t0.Add(5 * time.Minute))
			var got beetState
			e.do(e.keyA, "POST", path+"/resume", nil).json(t, &got)
			if end := t0.Add(11 * time.Minute); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(end) {
				t.Fatalf("after resume: %+v; want up and due at the run limit's end %v", got, end)
			}
			e.clock.set(t0.Add(12 * time.Minute))
			e.sweep()
			if f := e.flips(b.ID); len(f) == 0 || f[0].To != "down" || f[0].Kind != "overrun" {
				t.Fatalf("flips %+v; want the run's overrun", f)
			}
		})
	}
}

// TestResumeLearnedAutoBeetIsWatched: an auto beet that learned its
// schedule, paused and resumed, is up and watched again, its deadline
// counted from the resume: a job that never pings after the resume is
// flagged (it was left learning with no deadline, and never flagged,
// while its page said "Alerting since").
func TestResumeLearnedAutoBeetIsWatched(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 18, 13, 13, 0, time.UTC) // a Monday
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "Hourly export", "detection": map[string]any{"mode": "auto"}})
			path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
			for i := range 4 {
				e.clock.set(t0.Add(time.Duration(i) * time.Hour))
				e.ping(b.ID)
			}
			var got struct {
				beetState
				Watching *struct {
					ArmedAt *time.Time `json:"armed_at"`
				} `json:"watching"`
			}
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if got.Status != "up" {
				t.Fatalf("after 4 hourly pings: %+v, want up (learned)", got)
			}
			e.clock.set(t0.Add(3*time.Hour + 10*time.Minute))
			e.do(e.keyA, "POST", path+"/pause", nil)
			if e.do(e.keyA, "GET", path, nil).json(t, &got); got.Status != "paused" || got.DueAt != nil {
				t.Fatalf("paused: %+v, want due_at null (nothing is due while paused)", got.beetState)
			}
			resumed := t0.Add(2*24*time.Hour - 73*time.Minute) // Wednesday 17:00, before its hours
			e.clock.set(resumed)
			e.do(e.keyA, "POST", path+"/resume", nil)
			got.Watching = nil
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			if got.Status != "up" || got.DueAt == nil || !got.DueAt.After(resumed) || !strings.HasPrefix(got.StatusReason, "Resumed by a user; watching again: ") {
				t.Fatalf("after resume: %+v, want up, watching again, due after the resume %v", got.beetState, resumed)
			}
			if got.Watching == nil || got.Watching.ArmedAt == nil {
				t.Fatalf("after resume: watching %+v, want armed_at (up)", got.Watching)
			}
			// A change of zone after the resume still counts from it: not
			// judged at once for the days the beet was paused.
			due := *got.DueAt
			e.do(e.keyA, "PATCH", path, map[string]any{"timezone": "Europe/London"}).json(t, &got)
			if got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(due) {
				t.Fatalf("zone changed after the resume: %+v, want up and due still at %v", got.beetState, due)
			}
			e.clock.set(resumed.Add(2 * time.Hour))
			e.sweep()
			e.do(e.keyA, "GET", path, nil).json(t, &got)
			f := e.flips(b.ID)
			if got.Status != "down" || len(f) == 0 || f[0].Kind != "missed_run" || f[0].At.Before(resumed) {
				t.Fatalf("2 h after the resume without a ping: %+v, flips %+v; want down for a missed run after the resume", got.beetState, f)
			}
			if want := "Missed the run due at Dec 2 18:13 GMT: no event by 18:19"; !strings.HasPrefix(f[0].Reason, want) {
				t.Fatalf("reason %q, want the first run after the resume: %q", f[0].Reason, want)
			}
			if a := e.alerts(); len(a) != 1 || a[0] != "beet.down" {
				t.Fatalf("alerts %v, want one beet.down", a)
			}
		})
	}
}
