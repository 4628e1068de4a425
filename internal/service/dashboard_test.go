package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// The preview replays the beet's own past events with the settings given,
// raises the alerts they would have raised, and saves nothing.
func TestBacktestPreview(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	svc, store := openService(t, service.Options{Now: func() time.Time { return now }})
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "hourly job"})
	if err != nil {
		t.Fatal(err)
	}
	// Hourly for two days, a 5-hour gap, hourly again; and one event from
	// 40 days ago, outside the 30-day window.
	var ev []beet.Event
	at := now.Add(-48 * time.Hour)
	for i := 0; at.Before(now); i++ {
		if at.Before(now.Add(-20*time.Hour)) || at.After(now.Add(-15*time.Hour)) {
			ev = append(ev, beet.Event{ID: beet.EventID{1, byte(i)}, BeetID: b.ID, ReceivedAt: at, Method: "GET"})
		}
		at = at.Add(time.Hour)
	}
	ev = append(ev, beet.Event{ID: beet.EventID{2}, BeetID: b.ID, ReceivedAt: now.Add(-40 * 24 * time.Hour), Method: "GET"})
	if err := store.AddEvents(ctx, ev, nil); err != nil {
		t.Fatal(err)
	}

	hourly := beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}
	res, err := svc.Backtest(ctx, a.ID, b.ID, hourly)
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != len(ev)-1 || res.Truncated {
		t.Errorf("replayed %d events (truncated %v), want %d in the window", res.Events, res.Truncated, len(ev)-1)
	}
	var kinds []beet.FlipKind
	for _, f := range res.Flips {
		kinds = append(kinds, f.Kind)
	}
	want := []beet.FlipKind{beet.FlipFirst, beet.FlipSilence, beet.FlipRecovery}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Fatalf("flips %v, want %v", kinds, want)
	}
	if down := res.Flips[1].At; !down.Equal(now.Add(-21*time.Hour + 70*time.Minute)) {
		t.Errorf("silence flagged at %s, want 70 min after the last event before the gap", down)
	}
	// Job signals replay as they did live: a job that starts every hour
	// but whose runs fail turns the beet down at its first failure and up
	// at its next success, and its starts keep no period beet up.
	job, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "wrapped job"})
	if err != nil {
		t.Fatal(err)
	}
	one := func(n int) *int { return &n }
	var sig []beet.Event
	for i := range 10 {
		at := now.Add(time.Duration(i-15) * time.Hour)
		end := beet.Event{ID: beet.EventID{3, byte(i), 1}, BeetID: job.ID, ReceivedAt: at.Add(time.Minute), Method: "POST", Kind: beet.KindPing, ExitCode: one(0)}
		if i == 4 || i == 5 {
			end.Kind, end.ExitCode = beet.KindFail, one(1)
		}
		sig = append(sig, beet.Event{ID: beet.EventID{3, byte(i)}, BeetID: job.ID, ReceivedAt: at, Method: "POST", Kind: beet.KindStart}, end)
	}
	// Then starts only, for five hours: runs that never end.
	for i := range 5 {
		sig = append(sig, beet.Event{ID: beet.EventID{4, byte(i)}, BeetID: job.ID, ReceivedAt: now.Add(-time.Duration(5-i)*time.Hour + 30*time.Minute), Method: "POST", Kind: beet.KindStart})
	}
	if err := store.AddEvents(ctx, sig, nil); err != nil {
		t.Fatal(err)
	}
	res, err = svc.Backtest(ctx, a.ID, job.ID, hourly)
	if err != nil {
		t.Fatal(err)
	}
	kinds = kinds[:0]
	for _, f := range res.Flips {
		kinds = append(kinds, f.Kind)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]beet.FlipKind{beet.FlipFirst, beet.FlipFailed, beet.FlipRecovery, beet.FlipSilence}) {
		t.Errorf("flips of a job with signals %v, want first, failure, recovery, silence (starts are no runs)", kinds)
	}

	// A lax setting raises nothing for the same gap.
	daily := beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 86400}
	if res, err := svc.Backtest(ctx, a.ID, b.ID, daily); err != nil || len(res.Flips) != 1 {
		t.Errorf("daily period: %v flips, %v; want only the first event", res, err)
	}
	// Nothing was saved, bad settings are a field error, and another
	// account cannot preview the beet.
	got, _ := svc.Beet(ctx, a.ID, b.ID)
	if got.Detection.Mode != beet.ModeAuto || got.Status != beet.StatusNew {
		t.Errorf("the preview changed the beet: %+v", got)
	}
	if _, err := svc.Backtest(ctx, a.ID, b.ID, beet.Detection{Mode: beet.ModeCron, Cron: "nope", Timezone: "UTC"}); beet.ErrorField(err) != "detection.cron" {
		t.Errorf("bad cron: %v", err)
	}
	other, _, _ := svc.CreateAccount(ctx, "b@example.com", "password1", beet.PlanFree)
	if _, err := svc.Backtest(ctx, other.ID, b.ID, hourly); !beet.IsNotFound(err) {
		t.Errorf("another account's preview: %v", err)
	}
	if _, err := svc.BeetEventCounts(ctx, other.ID, b.ID, beet.Buckets{From: now.Add(-time.Hour), Step: time.Hour, N: 1}); !beet.IsNotFound(err) {
		t.Errorf("another account's counts: %v", err)
	}
}
