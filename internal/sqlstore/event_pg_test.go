package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// TestPostgresFailedCommitLeavesNothing: a group whose write PostgreSQL
// refuses (a NUL byte in a text column) fails as a whole, leaves the beet
// as it was, in the database and to the next commit, and leaves no
// connection inside a transaction: more failures than the pool holds
// connections are followed by a commit that succeeds.
func TestPostgresFailedCommitLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := testdb.Open(t, testdb.URL(t, "postgres"))
	acct := &beet.Account{Plan: beet.PlanFree, CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, acct, &beet.User{Email: "fail@example.com", PasswordHash: "-", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{AccountID: acct.ID, Name: "n", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}
	if err := s.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	event := func(i int, ua string) beet.Event {
		e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: ua}
		e.ID[0], e.ID[1] = byte(i), byte(i>>8)
		return e
	}
	var seen []string
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip {
		seen = append(seen, x.StatusReason)
		x.StatusReason = "touched"
		return nil
	}
	if err := s.AddEvents(ctx, []beet.Event{event(0, "curl")}, nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 25; i++ {
		if err := s.AddEvents(ctx, []beet.Event{event(2*i, "curl"), event(2*i+1, "bad\x00agent")}, observe); err == nil {
			t.Fatal("PostgreSQL took a NUL byte in a text column")
		}
	}
	got, err := s.FindBeetByID(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusReason == "touched" || got.LastEventAt == nil || !got.LastEventAt.Equal(at) {
		t.Fatalf("failed commits changed the beet: reason %q, last event %v (want %v)", got.StatusReason, got.LastEventAt, at)
	}
	seen = nil
	if err := s.AddEvents(ctx, []beet.Event{event(100, "curl")}, observe); err != nil {
		t.Fatalf("a commit after 25 failed ones: %v", err)
	}
	if len(seen) != 1 || seen[0] == "touched" {
		t.Fatalf("the commit after the failed ones started from %q; want the beet as stored", seen)
	}
	evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 100})
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d events stored, want the 2 of the commits that succeeded (%v)", len(evs), err)
	}
}

// pgAutoBeet opens a migrated PostgreSQL store and a second store on the
// same database (another instance), with one auto beet in the given status.
func pgAutoBeet(t *testing.T, status beet.Status) (s, other *sqlstore.DB, b *beet.Beet) {
	t.Helper()
	ctx := context.Background()
	u := testdb.URL(t, "postgres")
	s, other = testdb.Open(t, u), testdb.OpenUnmigrated(t, u)
	acct := &beet.Account{Plan: beet.PlanFree, CreatedAt: time.Now()}
	if err := s.CreateAccount(ctx, acct, &beet.User{Email: "cached@example.com", PasswordHash: "-", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b = &beet.Beet{AccountID: acct.ID, Name: "n", Token: beet.NewToken(), Status: status, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}
	if err := s.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	return s, other, b
}

// TestPostgresCommitFromCache: once a beet is cached, its commits take the
// one-batch path from the cached copy; a change made elsewhere (here a
// pause through another store) makes the next commit fall back to the
// locked read, which starts from the stored row.
func TestPostgresCommitFromCache(t *testing.T) {
	ctx := context.Background()
	s, other, b := pgAutoBeet(t, beet.StatusNew)
	at := time.Now().UTC().Truncate(time.Microsecond)
	var seen beet.Status
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip { seen = x.Status; return nil }
	send := func(i int) {
		t.Helper()
		e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: "curl"}
		e.ID[0], e.ID[1] = byte(i), 0xcc
		ev := []beet.Event{e}
		if err := s.AddEvents(ctx, ev, observe); err != nil || ev[0].BeetID != b.ID {
			t.Fatalf("event %d stored for beet %d (%v), want %d", i, ev[0].BeetID, err, b.ID)
		}
	}
	for i := range 5 {
		send(i)
	}
	if n := s.PGStaleForTest(); n != 0 {
		t.Fatalf("%d commits of a beet nobody else changed fell back to the locked read", n)
	}
	if err := other.SetBeetStatus(ctx, &beet.Flip{BeetID: b.ID, At: at, From: beet.StatusNew, To: beet.StatusPaused, Kind: beet.FlipManual, Reason: "paused"}); err != nil {
		t.Fatal(err)
	}
	send(5)
	if n := s.PGStaleForTest(); n != 1 || seen != beet.StatusPaused {
		t.Fatalf("after a pause elsewhere: %d fallbacks, observer saw %s; want 1 and paused", n, seen)
	}
	evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 100})
	if err != nil || len(evs) != 6 {
		t.Fatalf("%d events stored, want 6 (%v)", len(evs), err)
	}
}

// TestPostgresCachedCommitWithFlip: a commit from the cache whose
// detection flips the beet stores the flip, the beet's new status and the
// event together, once; and when the beet changed elsewhere, the locked
// path stores them from the row as stored, still once.
func TestPostgresCachedCommitWithFlip(t *testing.T) {
	ctx := context.Background()
	s, other, b := pgAutoBeet(t, beet.StatusUp)
	at := time.Now().UTC().Truncate(time.Microsecond)
	// flipTo turns the beet to its next status, with a flip.
	flipTo := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip {
		to := beet.StatusAnomalous
		if x.Status == beet.StatusAnomalous {
			to = beet.StatusUp
		}
		f := beet.Flip{From: x.Status, To: to, Kind: beet.FlipManual, At: sp.Last, Reason: "test"}
		x.Status = to
		return []beet.Flip{f}
	}
	send := func(i int, observe beet.Observer) {
		t.Helper()
		e := beet.Event{Token: b.Token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: "curl"}
		e.ID[0], e.ID[1] = byte(i), 0xcf
		if err := s.AddEvents(ctx, []beet.Event{e}, observe); err != nil {
			t.Fatal(err)
		}
	}
	send(0, nil) // cached from here on
	send(1, flipTo)
	if n := s.PGStaleForTest(); n != 0 {
		t.Fatalf("%d fallbacks to the locked read; want the flip committed from the cache", n)
	}
	if err := other.SetBeetStatus(ctx, &beet.Flip{BeetID: b.ID, At: at, From: beet.StatusAnomalous, To: beet.StatusPaused, Kind: beet.FlipManual, Reason: "paused"}); err != nil {
		t.Fatal(err)
	}
	send(2, flipTo) // from paused, as stored: to anomalous
	if n := s.PGStaleForTest(); n != 1 {
		t.Fatalf("%d fallbacks after a change elsewhere, want 1", n)
	}
	got, err := s.FindBeetByID(ctx, b.ID)
	if err != nil || got.Status != beet.StatusAnomalous {
		t.Fatalf("beet %v (%v), want anomalous", got.Status, err)
	}
	flips, err := s.FindFlips(ctx, b.ID, 10)
	if err != nil || len(flips) != 3 {
		t.Fatalf("%d flips stored (%v), want 3: up to anomalous, the pause, paused to anomalous", len(flips), err)
	}
	if evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 10}); err != nil || len(evs) != 3 {
		t.Fatalf("%d events stored (%v), want 3", len(evs), err)
	}
}

// TestPostgresEventsByMonthPartition: events are stored whichever month
// they fall in: this month's (in its partition), a month with no partition
// (the default one), a group across two months, and a month whose
// partition was dropped just after a commit wrote to it (a spool replay
// after retention dropped an ended month). It guards any commit that
// writes to a partition by name (pgladder14 tried one: that one failed the
// last case until it retried through events).
func TestPostgresEventsByMonthPartition(t *testing.T) {
	ctx := context.Background()
	s, _, b := pgAutoBeet(t, beet.StatusNew)
	n := 0
	send := func(at ...time.Time) {
		t.Helper()
		var evs []beet.Event
		for _, a := range at {
			n++
			e := beet.Event{Token: b.Token, ReceivedAt: a, Method: "GET", UserAgent: "curl"}
			e.ID[0], e.ID[1] = byte(n), 0xdd
			evs = append(evs, e)
		}
		if err := s.AddEvents(ctx, evs, nil); err != nil {
			t.Fatalf("events at %v: %v", at, err)
		}
	}
	count := func(table string) int64 {
		t.Helper()
		got, err := s.ReadForTest(ctx, "SELECT count(*) FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	old := time.Date(2002, 3, 10, 12, 0, 0, 0, time.UTC)
	send(now)
	send(now.Add(time.Second))
	if got := count("events_" + now.Format("200601")); got != 2 {
		t.Fatalf("this month's partition holds %d events, want 2", got)
	}
	send(old)                                        // no partition: the default one
	send(old.Add(time.Hour), now.Add(2*time.Second)) // two months
	dropped := time.Date(2003, 5, 10, 12, 0, 0, 0, time.UTC)
	if err := s.ExecForTest(ctx, `SELECT beet_events_partition('2003-05-01')`); err != nil {
		t.Fatal(err)
	}
	send(dropped) // in events_200305
	if err := s.ExecForTest(ctx, `DROP TABLE events_200305`); err != nil {
		t.Fatal(err)
	}
	send(dropped.Add(time.Hour)) // the partition written to just before is gone
	send(now.Add(3 * time.Second))
	// This month's 4, the default partition's 3; the dropped month took
	// its one event with it.
	evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if want := 7; len(evs) != want {
		t.Fatalf("%d events readable, want %d", len(evs), want)
	}
}

// TestPostgresCachedCommitAllOrNothing: a group from the cache of which one
// beet's token was rotated on another instance stores nothing of its
// attempt from the cache, not even the other beet's event (the cached
// commit's check gates the events' insert; without it the old token's
// event would be stored in the same statement); the locked path then
// stores the other beet's event once, from the row as stored, and drops
// the old token's.
func TestPostgresCachedCommitAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, other, a := pgAutoBeet(t, beet.StatusUp)
	b := &beet.Beet{AccountID: a.AccountID, Name: "second", Token: beet.NewToken(), Status: beet.StatusUp, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}
	if err := s.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	event := func(i int, token string) beet.Event {
		e := beet.Event{Token: token, ReceivedAt: at.Add(time.Duration(i) * time.Second), Method: "GET", UserAgent: "curl"}
		e.ID[0], e.ID[1] = byte(i), 0xa0
		return e
	}
	if err := s.AddEvents(ctx, []beet.Event{event(0, a.Token), event(1, b.Token)}, nil); err != nil {
		t.Fatal(err) // both cached from here on
	}
	if err := other.SetBeetToken(ctx, b.ID, beet.NewToken(), at); err != nil {
		t.Fatal(err)
	}
	group := []beet.Event{event(2, a.Token), event(3, b.Token)}
	if err := s.AddEvents(ctx, group, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.PGStaleForTest(); n != 1 {
		t.Fatalf("%d fallbacks to the locked read after a rotation elsewhere, want 1", n)
	}
	if group[0].BeetID != a.ID || group[1].BeetID != 0 {
		t.Fatalf("events matched beets %d and %d, want %d and none (the old token)", group[0].BeetID, group[1].BeetID, a.ID)
	}
	if evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 10}); err != nil || len(evs) != 1 {
		t.Fatalf("%d events stored for the rotated beet (%v), want 1: the one before the rotation", len(evs), err)
	}
	if evs, err := s.FindEvents(ctx, beet.EventFilter{BeetID: a.ID, Limit: 10}); err != nil || len(evs) != 2 {
		t.Fatalf("%d events stored for the other beet (%v), want 2", len(evs), err)
	}
}
