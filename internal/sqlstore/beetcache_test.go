package sqlstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// TestBeetCacheNeverOverwrites runs two stores on one database, as two
// instances would be, and checks that what AddEvents keeps of the beets it
// wrote never hides a change made elsewhere: by the other instance's
// commits, a status change, a rotation or a deletion. The observer counts
// the commits that saw the beet in its status reason, so a commit that
// started from a stale copy loses a count.
func TestBeetCacheNeverOverwrites(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		u := testdb.URL(t, engine)
		a, b := testdb.Open(t, u), testdb.OpenUnmigrated(t, u)
		acct := &beet.Account{Plan: beet.PlanFree, CreatedAt: time.Now()}
		if err := a.CreateAccount(ctx, acct, &beet.User{Email: "cache@example.com", PasswordHash: "-", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		bt := &beet.Beet{AccountID: acct.ID, Name: "n", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}
		if err := a.CreateBeet(ctx, bt); err != nil {
			t.Fatal(err)
		}
		var seen beet.Status
		count := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip {
			seen = x.Status
			n, _ := strconv.Atoi(x.StatusReason)
			x.StatusReason = strconv.Itoa(n + 1)
			return nil
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		send := func(s interface {
			AddEvents(context.Context, []beet.Event, beet.Observer) error
		}, token string) int64 {
			t.Helper()
			at = at.Add(time.Second)
			ev := []beet.Event{{ID: beet.EventID{byte(at.UnixNano()), byte(at.UnixNano() >> 8), byte(at.UnixNano() >> 16), byte(at.UnixNano() >> 24), 0xca}, Token: token, ReceivedAt: at, Method: "GET"}}
			if err := s.AddEvents(ctx, ev, count); err != nil {
				t.Fatal(err)
			}
			return ev[0].BeetID
		}
		reason := func() string {
			t.Helper()
			got, err := b.FindBeetByID(ctx, bt.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.StatusReason
		}

		send(a, bt.Token)
		send(a, bt.Token) // a now holds the beet in memory
		send(b, bt.Token) // ... and b changes it behind a's back
		send(a, bt.Token)
		if r := reason(); r != "4" {
			t.Fatalf("after 4 commits on two instances the observer counted %s: one started from a stale copy", r)
		}

		// A status change elsewhere (the sweeper, a pause) is what the next
		// commit starts from.
		if err := b.SetBeetStatus(ctx, &beet.Flip{BeetID: bt.ID, At: at, From: beet.StatusNew, To: beet.StatusPaused, Kind: beet.FlipManual, Reason: "paused"}); err != nil {
			t.Fatal(err)
		}
		send(a, bt.Token)
		if seen != beet.StatusPaused {
			t.Fatalf("the observer saw the beet %s after another instance paused it", seen)
		}

		// A rotation on b: a refuses the old token at once and takes the new one.
		newToken := beet.NewToken()
		if err := b.SetBeetToken(ctx, bt.ID, newToken, time.Now()); err != nil {
			t.Fatal(err)
		}
		if id := send(a, bt.Token); id != 0 {
			t.Fatalf("an event with the rotated token was stored for beet %d", id)
		}
		if id := send(a, newToken); id != bt.ID {
			t.Fatalf("an event with the new token went to beet %d, want %d", id, bt.ID)
		}

		// A deletion on b: a stores nothing more for the beet.
		if err := b.DeleteBeet(ctx, bt.ID); err != nil {
			t.Fatal(err)
		}
		if id := send(a, newToken); id != 0 {
			t.Fatalf("an event for a deleted beet was stored for beet %d", id)
		}
	})
}
