package service_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
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

// TestGlobalGuard: a few silences flip their beets as usual; when many
// beets fall silent together, one system incident opens and holds their
// alerts; when most held beets have events again it closes, and a beet
// that really stopped then flips on its own.
func TestGlobalGuard(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		store := testdb.New(t, engine)
		svc := service.New(store, service.Options{PasswordParams: cheapHash})
		a, _, err := svc.CreateAccount(ctx, "guard@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
		var ids []int64
		n := 0
		send := func(id int64, at time.Time) {
			t.Helper()
			n++
			ev := beet.Event{ID: beet.EventID{byte(n), byte(n >> 8), 7}, BeetID: id, ReceivedAt: at, Method: "GET"}
			if err := store.AddEvents(ctx, []beet.Event{ev}, svc.ObserveEvents); err != nil {
				t.Fatal(err)
			}
		}
		// 40 hourly beets; beet i last reports at t0 + i s, so deadlines
		// (1 h + 1 min grace later) pass one second apart.
		for i := range 40 {
			b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: fmt.Sprintf("job %d", i),
				Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 60}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, b.ID)
			send(b.ID, t0.Add(time.Duration(i)*time.Second))
		}
		status := func(id int64) beet.Status {
			b, err := store.FindBeetByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return b.Status
		}
		sweepAt := func(at time.Time) int {
			t.Helper()
			flipped, _, err := svc.Sweep(ctx, at, at, 100)
			if err != nil {
				t.Fatal(err)
			}
			return flipped
		}
		// All report at t0+50m (beet i at +i s); then ingestion breaks.
		for i := range 40 {
			send(ids[i], t0.Add(50*time.Minute+time.Duration(i)*time.Second))
		}
		due1 := t0.Add(50*time.Minute + 61*time.Minute)
		// The first two silences are alerts like any other.
		if got := sweepAt(due1.Add(1500 * time.Millisecond)); got != 2 || status(ids[0]) != beet.StatusDown {
			t.Fatalf("two silent beets: flipped %d, beet 0 %s; want 2 flips", got, status(ids[0]))
		}
		if inc, _ := store.OpenIncident(ctx); inc != nil {
			t.Fatalf("an incident opened for two silences: %+v", inc)
		}
		// The next sweep sees 3 more: 5 in 15 min trips the guard, which
		// holds them and every later one.
		if got := sweepAt(due1.Add(4500 * time.Millisecond)); got != 0 {
			t.Fatalf("the guard let %d flips through", got)
		}
		inc, err := store.OpenIncident(ctx)
		if err != nil || inc == nil {
			t.Fatalf("no incident after 5 silences in 15 min: %v", err)
		}
		if !strings.Contains(inc.Reason, "fell silent within 15 min") || inc.Held != 3 {
			t.Errorf("incident %+v", inc)
		}
		if got := sweepAt(due1.Add(time.Minute)); got != 0 {
			t.Fatalf("%d flips while the incident is open", got)
		}
		for i := 2; i < 40; i++ {
			if s := status(ids[i]); s != beet.StatusUp {
				t.Fatalf("held beet %d is %s", i, s)
			}
		}
		if inc, _ = store.OpenIncident(ctx); inc.Held != 38 || inc.Back != 0 {
			t.Fatalf("incident holds %d (back %d), want all 38", inc.Held, inc.Back)
		}
		// Ingestion is fixed: every held beet but 2 reports again. Their
		// late deadlines were moved, so no down-then-up pair is recorded.
		back := due1.Add(3 * time.Minute)
		for i := 4; i < 40; i++ {
			send(ids[i], back)
		}
		if b, _ := store.FindBeetByID(ctx, ids[10]); b.Status != beet.StatusUp {
			t.Fatalf("held beet after its event: %s", b.Status)
		}
		if fl, _ := store.FindFlips(ctx, ids[10], 10); len(fl) != 1 {
			t.Errorf("held beet has %d flips, want only its first event", len(fl))
		}
		if got := sweepAt(back.Add(time.Second)); got != 0 {
			t.Fatalf("%d flips as the incident closes", got)
		}
		if inc, _ := store.OpenIncident(ctx); inc != nil {
			t.Fatalf("incident still open with %d of %d back", inc.Back, inc.Held)
		}
		all, _ := store.FindIncidents(ctx, a.ID, 10)
		if len(all) != 1 || all[0].EndedAt == nil || !strings.Contains(all[0].EndReason, "flowing again") || all[0].Held != 38 || all[0].Back != 36 {
			t.Fatalf("incidents %+v", all)
		}
		// Beets 2 and 3 really stopped: they flip at their recheck.
		if got := sweepAt(due1.Add(10 * time.Minute)); got != 2 || status(ids[2]) != beet.StatusDown {
			t.Fatalf("after the incident: flipped %d, beet 2 %s; want the 2 silent beets down", got, status(ids[2]))
		}
	})
}

// TestMaintenanceWindowIsNotLearned: events in (or just after) a window
// the account set through the service reach the detector marked, so its
// model learns nothing from the window's hours; outside it they teach.
func TestMaintenanceWindowIsNotLearned(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	svc, store := openService(t, service.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	a, _, _ := svc.CreateAccount(ctx, "maint@example.com", "password1", beet.PlanFree)
	b, _ := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "checkout"})
	start, end := now.Add(-3*time.Hour), now.Add(time.Hour)
	if err := svc.CreateMaintenance(ctx, a.ID, &beet.MaintenanceWindow{Start: &start, End: &end}); err != nil {
		t.Fatal(err)
	}
	got, err := store.FindBeetByID(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := detect.ApplyEvents(got, beet.EventSpan{First: now.Add(-5 * time.Hour), Last: now.Add(-5 * time.Hour), Count: 3}); err != nil {
		t.Fatal(err)
	}
	sp := beet.EventSpan{First: now.Add(-time.Hour), Last: now.Add(-time.Hour), Count: 1} // closes hours in the window
	model := func(maintenance bool) []byte {
		c := *got
		sp := sp
		sp.Maintenance = maintenance
		if _, err := detect.ApplyEvents(&c, sp); err != nil {
			t.Fatal(err)
		}
		return c.Model
	}
	frozen, learned := model(true), model(false)
	if string(frozen) == string(learned) {
		t.Fatal("the test is void: a frozen and a learning model came out the same")
	}
	live := *got
	svc.ObserveEvents(&live, sp)
	if string(live.Model) != string(frozen) {
		t.Error("events in an account-wide maintenance window were learned from")
	}
	// After the window is deleted, the same events teach.
	ws, _ := svc.MaintenanceWindows(ctx, a.ID)
	if err := svc.DeleteMaintenance(ctx, a.ID, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	live = *got
	svc.ObserveEvents(&live, sp)
	if string(live.Model) != string(learned) {
		t.Error("with no window, the events were not learned from")
	}
}

// One account's beets falling silent together, however many, do not open
// the global incident: it would hold every other account's alerts (and
// tell their status pages that Beet has trouble). Silences across three
// accounts do.
func TestGlobalGuardNeedsSeveralAccounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		store := testdb.New(t, engine)
		svc := service.New(store, service.Options{PasswordParams: cheapHash})
		t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
		n := 0
		beets := func(email string, count int, last time.Time) []int64 {
			t.Helper()
			a, _, err := svc.CreateAccount(ctx, email, "password1", beet.PlanFree)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for i := range count {
				b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: fmt.Sprintf("job %d", i),
					Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}})
				if err != nil {
					t.Fatal(err)
				}
				n++
				ev := beet.Event{ID: beet.EventID{byte(n), byte(n >> 8), 9}, BeetID: b.ID, ReceivedAt: last, Method: "GET"}
				if err := store.AddEvents(ctx, []beet.Event{ev}, svc.ObserveEvents); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, b.ID)
			}
			return ids
		}
		mallory := beets("mallory@example.com", 8, t0)                 // due at t0+1m, all silent
		alice := beets("alice@example.com", 1, t0.Add(30*time.Second)) // due at t0+1m30s, silent too
		beets("bob@example.com", 1, t0.Add(time.Hour))                 // reports later: watched, not due
		at := t0.Add(2 * time.Minute)
		if flipped, _, err := svc.Sweep(ctx, at, at, 100); err != nil || flipped != 9 {
			t.Fatalf("sweep: flipped %d, %v; want all 9 silent beets down", flipped, err)
		}
		if inc, _ := store.OpenIncident(ctx); inc != nil {
			t.Fatalf("an incident opened for the silences of two accounts: %+v", inc)
		}
		if b, _ := store.FindBeetByID(ctx, alice[0]); b.Status != beet.StatusDown {
			t.Errorf("alice's silent beet is %s, want down", b.Status)
		}
		if b, _ := store.FindBeetByID(ctx, mallory[0]); b.Status != beet.StatusDown {
			t.Errorf("mallory's silent beet is %s, want down", b.Status)
		}
		// Five silences across three accounts within 15 min: the guard trips.
		carol := beets("carol@example.com", 5, t0.Add(5*time.Minute))
		at = t0.Add(7 * time.Minute)
		if flipped, _, err := svc.Sweep(ctx, at, at, 100); err != nil || flipped != 0 {
			t.Fatalf("sweep across three accounts: flipped %d, %v; want the guard to hold them", flipped, err)
		}
		if inc, _ := store.OpenIncident(ctx); inc == nil || inc.Held != len(carol) {
			t.Fatalf("incident %+v, want one holding carol's %d beets", inc, len(carol))
		}
	})
}
