package storetest

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// retentionTests cover the clean-up by time (DeleteExpiredEvents).
var retentionTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"DeleteExpiredEvents", testDeleteExpiredEvents},
	{"DeleteExpiredEventsPlanChange", testDeleteExpiredEventsPlanChange},
}

// expire calls DeleteExpiredEvents until done and returns the total and
// the number of calls. No test here has more than maxTies events of one
// instant: a call reads at most limit-1 events before an instant and all of it.
func expire(t *testing.T, s beet.Store, p beet.Plan, cutoff time.Time, limit int) (total int64, calls int) {
	t.Helper()
	for calls < 1000 {
		n, done, err := s.DeleteExpiredEvents(t.Context(), p, cutoff, limit)
		calls++
		if err != nil {
			t.Fatalf("DeleteExpiredEvents(%s) = %v", p, err)
		}
		if n < 0 || n > int64(limit+maxTies-1) {
			t.Fatalf("DeleteExpiredEvents(%s, limit %d) deleted %d in one call", p, limit, n)
		}
		total += n
		if done {
			return total, calls
		}
	}
	t.Fatalf("DeleteExpiredEvents(%s) not done after %d calls", p, calls)
	return total, calls
}

const maxTies = 5

func countEvents(t *testing.T, s beet.Store, beetID int64) int {
	t.Helper()
	got, err := s.FindEvents(t.Context(), beet.EventFilter{BeetID: beetID, Limit: beet.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

func testDeleteExpiredEvents(t *testing.T, s beet.Store) {
	ctx := t.Context()
	cutoff := t0
	free, pro := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanPro)
	fa, fb, pa := newBeet(t, s, free.ID), newBeet(t, s, free.ID), newBeet(t, s, pro.ID)
	addEvents(t, s, events(fa.ID, cutoff.Add(-time.Hour), time.Minute, 7))      // 7 old
	addEvents(t, s, events(fa.ID, cutoff, time.Minute, 2))                      // at the cutoff: kept
	addEvents(t, s, events(fb.ID, cutoff.Add(-30*time.Minute), time.Second, 4)) // 4 old, among fa's
	addEvents(t, s, events(pa.ID, cutoff.Add(-2*time.Hour), time.Minute, 6))    // old, another plan: kept
	// Five events of one instant: a slice never ends between them.
	addEvents(t, s, events(fb.ID, cutoff.Add(-10*time.Minute), 0, 5))

	if n, err := s.CountExpiredEvents(ctx, beet.PlanFree, cutoff); err != nil || n != 16 {
		t.Fatalf("CountExpiredEvents(free) = %d, %v; want 16", n, err)
	}
	total, calls := expire(t, s, beet.PlanFree, cutoff, 3)
	if total != 16 {
		t.Errorf("DeleteExpiredEvents(free) deleted %d, want 16", total)
	}
	if calls < 3 {
		t.Errorf("DeleteExpiredEvents(free, limit 3) finished 22 old events in %d calls; each call reads about 3", calls)
	}
	if got := countEvents(t, s, fa.ID); got != 2 {
		t.Errorf("free beet keeps %d events, want the 2 at the cutoff", got)
	}
	if got := countEvents(t, s, fb.ID); got != 0 {
		t.Errorf("free beet keeps %d old events, want 0", got)
	}
	if got := countEvents(t, s, pa.ID); got != 6 {
		t.Errorf("pro beet keeps %d events, want 6: the free cutoff is not its", got)
	}
	// Done means done: a second pass finds nothing, and counts nothing.
	if total, _ := expire(t, s, beet.PlanFree, cutoff, 3); total != 0 {
		t.Errorf("second pass deleted %d, want 0", total)
	}
	if n, err := s.CountExpiredEvents(ctx, beet.PlanFree, cutoff); err != nil || n != 0 {
		t.Errorf("CountExpiredEvents(free) after the pass = %d, %v; want 0", n, err)
	}
	// A later cutoff takes what has expired since.
	if total, _ := expire(t, s, beet.PlanFree, cutoff.Add(time.Minute+time.Microsecond), 3); total != 2 {
		t.Errorf("pass at a later cutoff deleted %d, want the 2 events now past it", total)
	}
	if total, _ := expire(t, s, beet.PlanPro, cutoff.Add(-117*time.Minute-30*time.Second), 100); total != 3 {
		t.Errorf("DeleteExpiredEvents(pro) deleted %d, want the 3 older than its cutoff", total)
	}
}

// A downgraded account's old events, kept by its former plan, are deleted
// by its new plan's next pass, although that plan's pass had gone by.
func testDeleteExpiredEventsPlanChange(t *testing.T, s beet.Store) {
	ctx := t.Context()
	cutoff := t0
	free, pro := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanPro)
	fb, pb := newBeet(t, s, free.ID), newBeet(t, s, pro.ID)
	addEvents(t, s, events(fb.ID, cutoff.Add(-time.Hour), time.Minute, 3))
	addEvents(t, s, events(pb.ID, cutoff.Add(-24*time.Hour), time.Minute, 4))
	addEvents(t, s, events(pb.ID, cutoff.Add(time.Minute), time.Minute, 1))
	if total, _ := expire(t, s, beet.PlanFree, cutoff, 2); total != 3 {
		t.Fatalf("DeleteExpiredEvents(free) deleted %d, want 3", total)
	}
	if err := s.SetAccountPlan(ctx, pro.ID, beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountExpiredEvents(ctx, beet.PlanFree, cutoff); err != nil || n != 4 {
		t.Errorf("after the downgrade CountExpiredEvents(free) = %d, %v; want 4", n, err)
	}
	if total, _ := expire(t, s, beet.PlanFree, cutoff, 2); total != 4 {
		t.Errorf("after the downgrade DeleteExpiredEvents(free) deleted %d, want the 4 old events", total)
	}
	if got := countEvents(t, s, pb.ID); got != 1 {
		t.Errorf("downgraded beet keeps %d events, want 1", got)
	}
}
