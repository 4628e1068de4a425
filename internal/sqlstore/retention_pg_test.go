package sqlstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// TestPostgresPlanChangeDuringCleanup: an account moved onto a plan while
// that plan's clean-up is inside a slice (its mark read, its DELETE not
// yet done) still has its old events deleted by the plan's next pass. The
// pass must not move the mark back past the events the plan change
// lowered it to: the plan change waits for the clean-up's lock.
//
// The slice is held inside its DELETE by a row lock that a third
// connection holds on one of the events it deletes; the plan change is
// started once the slice waits there, and the row lock let go once the
// plan change has committed or waits itself.
func TestPostgresPlanChangeDuringCleanup(t *testing.T) {
	ctx := context.Background()
	u := testdb.URL(t, "postgres")
	s := testdb.Open(t, u)
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })

	cutoff := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	var seq byte
	add := func(beetID int64, at ...time.Time) {
		t.Helper()
		var evs []beet.Event
		for _, a := range at {
			seq++
			e := beet.Event{BeetID: beetID, ReceivedAt: a, Method: "GET", UserAgent: "curl/8"}
			e.ID[0], e.ID[15] = 0xc1, seq
			evs = append(evs, e)
		}
		if err := s.AddEvents(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	account := func(p beet.Plan, email string) (accountID, beetID int64) {
		t.Helper()
		a := &beet.Account{Plan: p, CreatedAt: cutoff}
		if err := s.CreateAccount(ctx, a, &beet.User{Email: email, PasswordHash: "-", CreatedAt: cutoff}); err != nil {
			t.Fatal(err)
		}
		b := &beet.Beet{AccountID: a.ID, Name: "n", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: cutoff}
		if err := s.CreateBeet(ctx, b); err != nil {
			t.Fatal(err)
		}
		return a.ID, b.ID
	}
	_, free := account(beet.PlanFree, "free@example.com")
	proAccount, pro := account(beet.PlanPro, "pro@example.com")
	// The free plan's mark is an hour before the cutoff: its pass at
	// that time found nothing older.
	if _, done, err := s.DeleteExpiredEvents(ctx, beet.PlanFree, cutoff.Add(-time.Hour), 100); err != nil || !done {
		t.Fatalf("first pass: done %v, %v", done, err)
	}
	held := cutoff.Add(-30 * time.Minute)
	add(free, held, cutoff.Add(-20*time.Minute))                                              // the slice's: expired since the mark
	add(pro, cutoff.Add(-24*time.Hour), cutoff.Add(-23*time.Hour), cutoff.Add(-22*time.Hour)) // before the mark: kept by pro
	add(pro, cutoff.Add(time.Minute))                                                         // not expired on either plan

	// The third connection locks one of the slice's events.
	blocker, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	var blockerPID int64
	if err := blocker.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&blockerPID); err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.ExecContext(ctx, `SELECT 1 FROM events WHERE beet_id = $1 AND received_at = $2 FOR UPDATE`,
		free, held.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	// waiterOf is the PID of a backend that waits for a lock pid holds, or 0.
	waiterOf := func(pid int64) int64 {
		t.Helper()
		var waiter int64
		err := raw.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) LIMIT 1`, pid).Scan(&waiter)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		return waiter
	}
	// until polls cond for up to 10 s.
	until := func(cond func() bool) bool {
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if cond() {
				return true
			}
		}
		return false
	}

	cleaned := make(chan error, 1)
	go func() {
		_, _, err := s.DeleteExpiredEvents(ctx, beet.PlanFree, cutoff, 100)
		cleaned <- err
	}()
	var slice int64
	if !until(func() bool { slice = waiterOf(blockerPID); return slice != 0 }) {
		t.Fatal("the clean-up's slice never waited for the locked event")
	}
	moved := make(chan error, 1)
	go func() { moved <- s.SetAccountPlan(ctx, proAccount, beet.PlanFree) }()
	// The plan change commits at once (the race) or waits for the slice
	// (the fix); the slice goes on after either.
	var movedErr error
	committed := false
	if !until(func() bool {
		select {
		case movedErr = <-moved:
			committed = true
			return true
		default:
			return waiterOf(slice) != 0
		}
	}) {
		t.Fatal("the plan change neither committed nor waited for the slice")
	}
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-cleaned; err != nil {
		t.Fatalf("the slice: %v", err)
	}
	if !committed {
		movedErr = <-moved
	}
	if movedErr != nil {
		t.Fatalf("the plan change: %v", movedErr)
	}

	// The next pass deletes the moved account's events older than the
	// free cutoff, which its former plan had kept.
	var deleted int64
	for range 100 {
		n, done, err := s.DeleteExpiredEvents(ctx, beet.PlanFree, cutoff, 100)
		if err != nil {
			t.Fatal(err)
		}
		deleted += n
		if done {
			break
		}
	}
	left, err := s.FindEvents(ctx, beet.EventFilter{BeetID: pro, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if deleted != 3 || len(left) != 1 {
		var mark int64
		raw.QueryRowContext(ctx, `SELECT done_before FROM retention_marks WHERE plan = 'free'`).Scan(&mark)
		t.Errorf("after the plan change the next free pass deleted %d events and left %d of the moved account's; want 3 deleted, 1 left (the free mark is at %s, the account's oldest event at %s)",
			deleted, len(left), time.UnixMicro(mark).UTC(), cutoff.Add(-24*time.Hour))
	}
}
