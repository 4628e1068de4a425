package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

func (e *clockEnv) patch(id int64, detection map[string]any) beetState {
	e.t.Helper()
	r := e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/beets/%d", id), map[string]any{"detection": detection})
	if r.status != 200 {
		e.t.Fatalf("patch: %d %s", r.status, r.body)
	}
	var b beetState
	r.json(e.t, &b)
	// The beet as read afterwards is the beet the PATCH answered.
	var again beetState
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", id), nil).json(e.t, &again)
	if again.Status != b.Status || again.StatusReason != b.StatusReason || !sameTime(again.DueAt, b.DueAt) {
		e.t.Fatalf("PATCH answered %+v, GET reads %+v", b, again)
	}
	return b
}

// alerts lists the events of the messages queued on the webhook, oldest first.
func (e *clockEnv) alerts() []string {
	e.t.Helper()
	var out struct {
		Deliveries []struct{ Event string }
	}
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/channels/%d/deliveries", e.hook.ID), nil).json(e.t, &out)
	var events []string
	for i := len(out.Deliveries) - 1; i >= 0; i-- {
		events = append(events, out.Deliveries[i].Event)
	}
	return events
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// TestPatchDetectionRecomputesState: a PATCH of detection moves the
// beet's deadline, status and reason to the new settings at once, on both
// engines. Widening 1 min → 24 h holds the alert off until a day after
// the last event, and the silence then names that event; tightening
// 24 h → 1 min after ten silent minutes turns the beet down now, with
// the alert sent; auto → period ends learning.
func TestPatchDetectionRecomputesState(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 17, 41, 59, 894475000, time.UTC)
	for _, engine := range testdb.Engines {
		t.Run(engine+"/widen", func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "widen", "detection": period(60)})
			e.ping(b.ID)
			e.clock.set(t0.Add(10 * time.Second))
			got := e.patch(b.ID, period(86400))
			if want := t0.Add(24 * time.Hour); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(want) {
				t.Fatalf("after widening: %+v, want up and due at %v", got, want)
			}
			if !strings.Contains(got.StatusReason, "Detection settings changed") || !strings.Contains(got.StatusReason, "every 24 h") {
				t.Errorf("status_reason %q does not say the new expectation", got.StatusReason)
			}
			// The old deadline, a minute after the event, passes: nothing.
			e.clock.set(t0.Add(2 * time.Minute))
			e.sweep()
			if f := e.flips(b.ID); len(f) != 1 || f[0].To != "up" {
				t.Fatalf("a minute after the event, under a 24 h period: flips %+v", f)
			}
			// A day later it goes down, and says when the last event came.
			e.clock.set(t0.Add(24*time.Hour + time.Second))
			e.sweep()
			f := e.flips(b.ID)
			if len(f) != 2 || f[0].To != "down" || !f[0].At.Equal(t0.Add(24*time.Hour)) ||
				!strings.HasPrefix(f[0].Reason, "No event since Dec 4 17:41 UTC (24 h);") {
				t.Fatalf("a day after the event: flips %+v", f)
			}
			if a := e.alerts(); len(a) != 1 || a[0] != beet.EventDown {
				t.Errorf("messages %v, want one beet.down", a)
			}
		})
		t.Run(engine+"/tighten", func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "tighten", "detection": period(86400)})
			e.ping(b.ID)
			// Still within the new period: up, due a minute after the event.
			e.clock.set(t0.Add(30 * time.Second))
			got := e.patch(b.ID, period(120))
			if want := t0.Add(2 * time.Minute); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(want) {
				t.Fatalf("after tightening to 2 min: %+v, want up and due at %v", got, want)
			}
			// Ten minutes without an event: a 1 min period is overdue now.
			now := t0.Add(10 * time.Minute)
			e.clock.set(now)
			got = e.patch(b.ID, period(60))
			if got.Status != "down" || got.DueAt != nil {
				t.Fatalf("after tightening to 1 min ten minutes after the event: %+v, want down", got)
			}
			want := "No event since Dec 4 17:41 UTC (10 min); expected one at least every 1 min."
			f := e.flips(b.ID)
			if len(f) != 2 || f[0].From != "up" || f[0].To != "down" || f[0].Kind != beet.FlipSilence ||
				!f[0].At.Equal(now) || f[0].Reason != want || got.StatusReason != want {
				t.Fatalf("flips %+v, status_reason %q; want up → down at %v: %q", f, got.StatusReason, now, want)
			}
			if a := e.alerts(); len(a) != 1 || a[0] != beet.EventDown {
				t.Errorf("messages %v, want the beet.down alert", a)
			}
			// The next event recovers it as usual.
			e.ping(b.ID)
			if f := e.flips(b.ID); len(f) != 3 || f[0].To != "up" || f[0].Kind != beet.FlipRecovery {
				t.Fatalf("after the next event: flips %+v", f)
			}
		})
		t.Run(engine+"/auto-to-period", func(t *testing.T) {
			e := newClockEnv(t, engine, t0)
			b := e.createBeet(e.keyA, map[string]any{"name": "auto"})
			for i := range 3 {
				e.clock.set(t0.Add(time.Duration(i) * 5 * time.Minute))
				e.ping(b.ID)
			}
			last := e.clock.now()
			var before beetState
			e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", b.ID), nil).json(t, &before)
			if before.Status != "learning" {
				t.Fatalf("auto beet after 3 events: %+v, want learning", before)
			}
			e.clock.set(last.Add(time.Minute))
			got := e.patch(b.ID, period(3600))
			if want := last.Add(time.Hour); got.Status != "up" || got.DueAt == nil || !got.DueAt.Equal(want) || got.Watching != nil {
				t.Fatalf("after auto → period: %+v, want up, due at %v, nothing learned", got, want)
			}
			if !strings.HasPrefix(got.StatusReason, "Switched to period mode. Expects an event at least every 1 h") {
				t.Errorf("status_reason %q", got.StatusReason)
			}
			f := e.flips(b.ID)
			if len(f) != 2 || f[0].From != "learning" || f[0].To != "up" || f[0].Kind != beet.FlipManual || f[0].Reason != got.StatusReason {
				t.Fatalf("flips %+v", f)
			}
			if a := e.alerts(); len(a) != 0 {
				t.Errorf("messages %v, want none", a)
			}
			// Back to auto: learning afresh, as a new auto beet would.
			e.clock.set(last.Add(2 * time.Minute))
			got = e.patch(b.ID, map[string]any{"mode": "auto"})
			if got.Status != "learning" || got.DueAt != nil || !strings.HasPrefix(got.StatusReason, "Switched to auto mode. Learning this beet's rhythm") {
				t.Fatalf("after period → auto: %+v, want learning, no deadline", got)
			}
			if f := e.flips(b.ID); len(f) != 3 || f[0].From != "up" || f[0].To != "learning" || f[0].Kind != beet.FlipManual {
				t.Fatalf("flips %+v", f)
			}
		})
	}
}
