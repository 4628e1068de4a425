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
		a, _, err := svcs[0].CreateAccount(ctx, "many@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var beets []int64
		for i := range 5 {
			b, err := svcs[0].CreateBeet(ctx, a.ID, service.BeetInput{Name: "b"})
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
			if err := stores[0].AddEvents(ctx, evs, nil); err != nil {
				t.Fatal(err)
			}
		}
		now := t0.AddDate(0, 0, 35) // the first 300 of each beet are older than 30 days
		var wg sync.WaitGroup
		deleted := make([]int64, len(svcs))
		for i, svc := range svcs {
			wg.Go(func() {
				r, err := svc.Cleanup(ctx, now, false)
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
		for _, id := range beets {
			evs, err := stores[0].FindEvents(ctx, beet.EventFilter{BeetID: id, Limit: 1000})
			if err != nil || len(evs) != 100 {
				t.Fatalf("beet %d keeps %d events (%v), want the 100 recent ones", id, len(evs), err)
			}
		}
	})
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
