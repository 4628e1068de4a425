package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestPeriodBeetGoesDownAndRecovers follows a beet in period mode through
// its life: first event (up, deadline set), silence past period + grace
// (the sweeper flips it down, once, with a reason), events again (up).
func TestPeriodBeetGoesDownAndRecovers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		store := testdb.New(t, engine)
		svc := service.New(store, service.Options{PasswordParams: cheapHash})
		a, _, err := svc.CreateAccount(ctx, "period@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "nightly", Timezone: "Europe/Riga",
			Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300}})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
		commit := func(at time.Time) {
			t.Helper()
			ev := beet.Event{ID: beet.EventID{byte(at.Unix()), byte(at.Unix() >> 8), byte(at.Unix() >> 16)}, BeetID: b.ID, ReceivedAt: at, Method: "GET"}
			if err := store.AddEvents(ctx, []beet.Event{ev}, svc.ObserveEvents); err != nil {
				t.Fatal(err)
			}
		}
		get := func() *beet.Beet {
			got, err := store.FindBeetByID(ctx, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}

		commit(t0)
		got := get()
		wantDue := t0.Add(65 * time.Minute)
		if got.Status != beet.StatusUp || got.DueAt == nil || !got.DueAt.Equal(wantDue) {
			t.Fatalf("after the first event: status %s, due %v; want up, due %v", got.Status, got.DueAt, wantDue)
		}
		commit(t0.Add(30 * time.Minute)) // moves the deadline
		wantDue = t0.Add(95 * time.Minute)
		if got = get(); !got.DueAt.Equal(wantDue) {
			t.Fatalf("deadline %v after a second event, want %v", got.DueAt, wantDue)
		}

		// Before the deadline, nothing; after it, one flip, from two sweepers.
		if n, _, err := svc.Sweep(ctx, wantDue.Add(-time.Second), wantDue.Add(-time.Second), 100); n != 0 || err != nil {
			t.Fatalf("sweep before the deadline flipped %d (%v)", n, err)
		}
		var wg sync.WaitGroup
		flips := make([]int, 2)
		for i := range flips {
			wg.Go(func() {
				n, _, err := svc.Sweep(ctx, wantDue.Add(time.Minute), wantDue.Add(time.Minute), 100)
				if err != nil {
					t.Error(err)
				}
				flips[i] = n
			})
		}
		wg.Wait()
		if flips[0]+flips[1] != 1 {
			t.Fatalf("two sweepers flipped %v times, want exactly once in all", flips)
		}
		got = get()
		if got.Status != beet.StatusDown || got.DueAt != nil || !strings.Contains(got.StatusReason, "expected one at least every 1 h") {
			t.Fatalf("after the deadline: %s %q due %v", got.Status, got.StatusReason, got.DueAt)
		}
		fl, _ := store.FindFlips(ctx, b.ID, 10)
		if len(fl) != 2 || fl[0].Kind != beet.FlipSilence || !fl[0].At.Equal(wantDue) || fl[0].Observed == nil || *fl[0].Observed != 0 {
			t.Fatalf("flips %+v", fl)
		}

		commit(t0.Add(3 * time.Hour))
		got = get()
		if got.Status != beet.StatusUp || !strings.Contains(got.StatusReason, "Events are back after being down for 1 h 25 min") {
			t.Fatalf("after events return: %s %q", got.Status, got.StatusReason)
		}
		if fl, _ := store.FindFlips(ctx, b.ID, 10); len(fl) != 3 || fl[0].Kind != beet.FlipRecovery {
			t.Fatalf("flips after recovery: %+v", fl)
		}

		// Paused: no alerts; its stale deadline is cleared by the sweeper.
		if _, err := svc.Pause(ctx, a.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		later := t0.Add(10 * time.Hour)
		if n, examined, err := svc.Sweep(ctx, later, later, 100); n != 0 || examined != 1 || err != nil {
			t.Fatalf("sweep of a paused beet: flipped %d, examined %d, %v", n, examined, err)
		}
		if got = get(); got.Status != beet.StatusPaused || got.DueAt != nil {
			t.Fatalf("paused beet after a sweep: %s, due %v", got.Status, got.DueAt)
		}
	})
}

// TestAutoBeetLearns: in auto mode the first event starts learning, and
// no deadline is set until the learned model exists.
func TestAutoBeetLearns(t *testing.T) {
	svc, store := openService(t, service.Options{})
	ctx := context.Background()
	a, _, _ := svc.CreateAccount(ctx, "auto@example.com", "password1", beet.PlanFree)
	b, _ := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "checkout"})
	ev := beet.Event{ID: beet.EventID{1}, BeetID: b.ID, ReceivedAt: time.Now().UTC().Truncate(time.Microsecond), Method: "POST"}
	if err := store.AddEvents(ctx, []beet.Event{ev}, svc.ObserveEvents); err != nil {
		t.Fatal(err)
	}
	got, _ := store.FindBeetByID(ctx, b.ID)
	if got.Status != beet.StatusLearning || got.DueAt != nil {
		t.Fatalf("auto beet after its first event: %s, due %v", got.Status, got.DueAt)
	}
}
