package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
)

// pgWake reads a beet's wake_at (-1 for NULL) and due_at.
func pgWake(t *testing.T, s *sqlstore.DB, id int64) (wake, due int64) {
	t.Helper()
	v, err := s.ReadForTest(context.Background(), fmt.Sprintf(
		`SELECT coalesce(wake_at, -1) FROM beets WHERE id = %d UNION ALL SELECT coalesce(due_at, -1) FROM beets WHERE id = %d`, id, id))
	if err != nil || len(v) != 2 {
		t.Fatalf("wake_at of beet %d: %v, %v", id, v, err)
	}
	return v[0], v[1]
}

// TestPostgresWakeAt: on PostgreSQL the deadline index holds wake_at, a
// lower bound of due_at that an event moving the deadline later leaves
// alone (so the beet's UPDATE can be HOT). The sweeper still finds a beet
// exactly when its deadline passes: one woken early has its wake_at moved
// up to its deadline, without making the cached copy stale; a deadline
// moved earlier, by an event or by another instance, lowers wake_at; a
// cleared deadline clears it.
func TestPostgresWakeAt(t *testing.T) {
	ctx := context.Background()
	s, other, b := pgAutoBeet(t, beet.StatusUp)
	at := time.Now().UTC().Truncate(time.Microsecond)
	var due *time.Time
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip { x.DueAt = due; return nil }
	send := func(i int, d *time.Time) {
		t.Helper()
		due = d
		e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: "curl"}
		e.ID[0], e.ID[1] = byte(i), 0xd1
		if err := s.AddEvents(ctx, []beet.Event{e}, observe); err != nil {
			t.Fatal(err)
		}
	}
	us := func(d time.Duration) int64 { return at.Add(d).UnixMicro() }
	ptr := func(d time.Duration) *time.Time { x := at.Add(d); return &x }
	findDue := func(d time.Duration) []*beet.Beet {
		t.Helper()
		got, err := s.FindDueBeets(ctx, at.Add(d), 10)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	send(0, ptr(time.Minute))
	if w, _ := pgWake(t, s, b.ID); w != us(time.Minute) {
		t.Fatalf("first deadline: wake_at %d, want %d", w, us(time.Minute))
	}
	send(1, ptr(2*time.Minute))
	if w, d := pgWake(t, s, b.ID); w != us(time.Minute) || d != us(2*time.Minute) {
		t.Fatalf("deadline moved later: wake_at %d, due_at %d; want wake_at left at %d", w, d, us(time.Minute))
	}
	if got := findDue(90 * time.Second); len(got) != 0 {
		t.Fatalf("FindDueBeets before the deadline = %d beets, want none", len(got))
	}
	if w, _ := pgWake(t, s, b.ID); w != us(2*time.Minute) {
		t.Fatalf("woken early: wake_at %d, want moved up to the deadline %d", w, us(2*time.Minute))
	}
	send(2, ptr(3*time.Minute))
	if n := s.PGStaleForTest(); n != 0 {
		t.Fatalf("%d commits fell back to the locked read after the sweeper moved only wake_at", n)
	}
	if got := findDue(3 * time.Minute); len(got) != 1 || !got[0].DueAt.Equal(at.Add(3*time.Minute)) {
		t.Fatalf("FindDueBeets at the deadline = %v, want the beet due at +3m", got)
	}

	send(3, ptr(30*time.Second))
	if w, _ := pgWake(t, s, b.ID); w != us(30*time.Second) {
		t.Fatalf("deadline moved earlier: wake_at %d, want %d", w, us(30*time.Second))
	}
	if got := findDue(45 * time.Second); len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("FindDueBeets after an earlier deadline = %v, want the beet", got)
	}

	// Another instance's writes keep wake_at <= due_at as well.
	if err := other.SetBeetDue(ctx, b.ID, ptr(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := findDue(20 * time.Second); len(got) != 1 {
		t.Fatalf("FindDueBeets after SetBeetDue earlier elsewhere = %v, want the beet", got)
	}

	send(4, nil)
	if w, _ := pgWake(t, s, b.ID); w != -1 {
		t.Fatalf("deadline cleared: wake_at %d, want NULL", w)
	}
	if n, err := s.CountWatched(ctx); n != 0 || err != nil {
		t.Fatalf("CountWatched = %d, %v; want 0", n, err)
	}
}

// TestPostgresFindDuePagesPastEarlyWakes: beets woken before their
// deadlines fill whole pages of the wake index; FindDueBeets moves them on
// and still returns the due beet behind them.
func TestPostgresFindDuePagesPastEarlyWakes(t *testing.T) {
	ctx := context.Background()
	s, _, first := pgAutoBeet(t, beet.StatusUp)
	at := time.Now().UTC().Truncate(time.Microsecond)
	beets := []*beet.Beet{first}
	for i := range 4 {
		b := &beet.Beet{AccountID: first.AccountID, Name: fmt.Sprint("w", i), Token: beet.NewToken(), Status: beet.StatusUp,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: at}
		if err := s.CreateBeet(ctx, b); err != nil {
			t.Fatal(err)
		}
		beets = append(beets, b)
	}
	// All get a deadline at +1m; then all but the last move it to +1h.
	dues := map[int64]time.Time{}
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip { d := dues[x.ID]; x.DueAt = &d; return nil }
	for round, later := range []bool{false, true} {
		var evs []beet.Event
		for i, b := range beets {
			dues[b.ID] = at.Add(time.Minute)
			if later && i < len(beets)-1 {
				dues[b.ID] = at.Add(time.Hour)
			}
			e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(round) * time.Second), Method: "GET", UserAgent: "curl"}
			e.ID[0], e.ID[1], e.ID[2] = byte(i), byte(round), 0xd2
			evs = append(evs, e)
		}
		if err := s.AddEvents(ctx, evs, observe); err != nil {
			t.Fatal(err)
		}
	}
	last := beets[len(beets)-1]
	got, err := s.FindDueBeets(ctx, at.Add(2*time.Minute), 1)
	if err != nil || len(got) != 1 || got[0].ID != last.ID {
		t.Fatalf("FindDueBeets(limit 1) = %v, %v; want beet %d behind %d woken early", got, err, last.ID, len(beets)-1)
	}
	for _, b := range beets[:len(beets)-1] {
		if w, _ := pgWake(t, s, b.ID); w != at.Add(time.Hour).UnixMicro() {
			t.Errorf("beet %d woken early: wake_at %d, want its deadline", b.ID, w)
		}
	}
}

// TestPostgresWakeMigration: a deadline stored before migration 00016 is
// found by the sweeper after it (wake_at starts at due_at).
func TestPostgresWakeMigration(t *testing.T) {
	ctx := context.Background()
	s := openPostgres(t)
	if err := s.MigrateBeforeForTest(ctx, 16); err != nil {
		t.Fatal(err)
	}
	b := oldSchemaBeet(t, s, beet.PlanFree, beet.StatusUp)
	due := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.SetBeetDue(ctx, b.ID, &due); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindDueBeets(ctx, due, 10)
	if err != nil || len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("FindDueBeets after the migration = %v, %v; want the beet", got, err)
	}
	if n, err := s.CountWatched(ctx); n != 1 || err != nil {
		t.Fatalf("CountWatched = %d, %v; want 1", n, err)
	}
}

// TestPostgresDeletedBeetTakesItsEvents: without the events' foreign key
// (migration 00017), a beet row deleted by any statement still takes its
// events with it, as the key's ON DELETE CASCADE did.
func TestPostgresDeletedBeetTakesItsEvents(t *testing.T) {
	ctx := context.Background()
	s, _, b := pgAutoBeet(t, beet.StatusUp)
	at := time.Now().UTC().Truncate(time.Microsecond)
	var evs []beet.Event
	for i := range 3 {
		e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: "curl"}
		e.ID[0], e.ID[1] = byte(i), 0xd3
		evs = append(evs, e)
	}
	if err := s.AddEvents(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ExecForTest(ctx, `DELETE FROM beets WHERE id = $1`, b.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ReadForTest(ctx, fmt.Sprintf(`SELECT count(*) FROM events WHERE beet_id = %d`, b.ID)); err != nil || n[0] != 0 {
		t.Fatalf("events left of a deleted beet: %v, %v", n, err)
	}
}
