package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestCleanupOnSeveralInstancesAtOnce runs the clean-up from three
// "instances" (services over their own connection pools to one database)
// at the same time: together they delete every expired event exactly once,
// keep every other, and none fails.
func TestCleanupOnSeveralInstancesAtOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		url := testdb.URL(t, engine)
		ctx := context.Background()
		var svcs []*service.Service
		var stores []beet.Store
		for range 3 {
			st := testdb.Open(t, url)
			stores = append(stores, st)
			svcs = append(svcs, service.New(st, service.Options{CleanupBatch: 50, PasswordParams: cheapHash}))
		}
		beets := addExpiring(t, svcs[0], stores[0], 5)
		var wg sync.WaitGroup
		deleted := make([]int64, len(svcs))
		for i, svc := range svcs {
			wg.Go(func() {
				r, err := svc.Cleanup(ctx, expiringNow, false)
				if err != nil {
					t.Errorf("instance %d: %v", i, err)
					return
				}
				deleted[i] = r.Total
			})
		}
		wg.Wait()
		var total int64
		for _, n := range deleted {
			total += n
		}
		if total != 5*300 {
			t.Errorf("instances deleted %v, %d in all; want 1500 in all", deleted, total)
		}
		if left := countEvents(t, stores[0], beets); left != 5*100 {
			t.Errorf("%d events left, want the 500 recent ones", left)
		}
	})
}

// TestCleanupStoppedMidPassResumes: a pass stopped by shutdown at its third
// batch keeps what its first two deleted, reports them with the
// cancellation, and the next pass deletes the rest and nothing else.
func TestCleanupStoppedMidPassResumes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		st := testdb.Open(t, testdb.URL(t, engine))
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		stopping := &stopAtBatch{Store: st, at: 3, stop: stop}
		svc := service.New(stopping, service.Options{CleanupBatch: 50, PasswordParams: cheapHash})
		beets := addExpiring(t, svc, st, 2)
		rep, err := svc.Cleanup(ctx, expiringNow, false)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("pass stopped at its third batch: err = %v, want context.Canceled", err)
		}
		if rep == nil || rep.Total != 2*50 {
			t.Fatalf("stopped pass reported %+v, want the 100 events of its two finished batches", rep)
		}
		if left := countEvents(t, st, beets); left != 2*400-100 {
			t.Fatalf("%d events left after the stopped pass, want 700: its finished batches stay deleted", left)
		}
		rep, err = service.New(st, service.Options{CleanupBatch: 50, PasswordParams: cheapHash}).Cleanup(context.Background(), expiringNow, false)
		if err != nil || rep.Total != 2*300-100 {
			t.Fatalf("next pass: deleted %v (%v), want the other 500 expired events", rep, err)
		}
		if left := countEvents(t, st, beets); left != 2*100 {
			t.Errorf("%d events left, want the 200 recent ones", left)
		}
	})
}

// stopAtBatch is a real store whose at-th DeleteExpiredEvents call stops the
// pass's context as it returns, as a shutdown arriving mid-batch would.
type stopAtBatch struct {
	beet.Store
	at, calls int
	stop      context.CancelFunc
}

func (s *stopAtBatch) DeleteExpiredEvents(ctx context.Context, p beet.Plan, cutoff time.Time, limit int) (int64, bool, error) {
	if s.calls++; s.calls == s.at {
		s.stop()
	}
	return s.Store.DeleteExpiredEvents(ctx, p, cutoff, limit)
}

// expiringNow is the clean-up time addExpiring's events are dated for.
var expiringNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 35)

// addExpiring adds n beets to a new Free account, each with 400 events: 300
// older than 30 days at expiringNow, 100 recent. It returns the beets' IDs.
func addExpiring(t *testing.T, svc *service.Service, st beet.Store, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	a, _, err := svc.CreateAccount(ctx, "many@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	t0 := expiringNow.AddDate(0, 0, -35)
	var beets []int64
	for i := range n {
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		beets = append(beets, b.ID)
		var evs []beet.Event
		for j := range 400 { // 300 old, 100 recent
			at := t0.Add(time.Duration(j) * time.Minute)
			if j >= 300 {
				at = t0.AddDate(0, 0, 40).Add(time.Duration(j) * time.Minute)
			}
			ev := beet.Event{BeetID: b.ID, ReceivedAt: at, Method: "GET"}
			ev.ID[0], ev.ID[1], ev.ID[2] = byte(i), byte(j>>8), byte(j)
			evs = append(evs, ev)
		}
		if err := st.AddEvents(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	return beets
}

// countEvents counts the events the beets keep.
func countEvents(t *testing.T, st beet.Store, beets []int64) int {
	t.Helper()
	n := 0
	for _, id := range beets {
		evs, err := st.FindEvents(context.Background(), beet.EventFilter{BeetID: id, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		n += len(evs)
	}
	return n
}

// TestCleanupRefusesTheFuture: a pass as of a later time would move the
// retention marks past events still to come, so later passes would never
// delete them; it is refused, and a dry run (which moves no mark) is not.
func TestCleanupRefusesTheFuture(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc, _ := openService(t, service.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	future := now.AddDate(0, 0, 1)
	if _, err := svc.Cleanup(ctx, future, false); beet.ErrorCode(err) != beet.EINVALID || !strings.Contains(err.Error(), "later than now") {
		t.Fatalf("Cleanup in the future = %v, want invalid: later than now", err)
	}
	if _, err := svc.Cleanup(ctx, future, true); err != nil {
		t.Fatalf("dry run in the future: %v", err)
	}
	if _, err := svc.Cleanup(ctx, now, false); err != nil {
		t.Fatalf("Cleanup now: %v", err)
	}
}
