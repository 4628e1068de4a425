package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// userTests cover account settings, users and tags (UserStore, TagStore).
var userTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"AccountTimezoneAndBadgeKey", testAccountSettings},
	{"UserPasswordAndRemoval", testUserPasswordAndRemoval},
	{"BeetTags", testBeetTags},
	{"BeetOrders", testBeetOrders},
}

func testAccountSettings(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	got, err := s.FindAccountByID(ctx, a.ID)
	if err != nil || got.Timezone != "UTC" || got.BadgeKey != "" {
		t.Fatalf("new account = %+v, %v; want zone UTC and no badge key", got, err)
	}
	z := &beet.Account{Plan: beet.PlanFree, Timezone: "Europe/Riga", CreatedAt: t0}
	if err := s.CreateAccount(ctx, z, &beet.User{Email: uniq("tz") + "@example.com", PasswordHash: "x", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindAccountByID(ctx, z.ID); got.Timezone != "Europe/Riga" {
		t.Fatalf("account created with Europe/Riga has %q", got.Timezone)
	}
	if err := s.SetAccountTimezone(ctx, a.ID, "America/New_York"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindAccountByID(ctx, a.ID); got.Timezone != "America/New_York" {
		t.Fatalf("zone after SetAccountTimezone = %q", got.Timezone)
	}
	wantCode(t, "SetAccountTimezone(unknown)", s.SetAccountTimezone(ctx, 1<<40, "UTC"), beet.ENOTFOUND)
	// Compare and set: the second of two first badges loses and reads the winner's key.
	if ok, err := s.SetAccountBadgeKey(ctx, a.ID, "", "k1"); !ok || err != nil {
		t.Fatalf("first SetAccountBadgeKey = %v, %v", ok, err)
	}
	if ok, err := s.SetAccountBadgeKey(ctx, a.ID, "", "k2"); ok || err != nil {
		t.Fatalf("second SetAccountBadgeKey from empty = %v, %v; want false (the key is no longer empty)", ok, err)
	}
	if got, _ := s.FindAccountByID(ctx, a.ID); got.BadgeKey != "k1" {
		t.Fatalf("badge key = %q, want k1", got.BadgeKey)
	}
}

func testUserPasswordAndRemoval(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	users, _ := s.FindUsers(ctx, a.ID)
	first := users[0]
	second := &beet.User{AccountID: a.ID, Email: uniq("second") + "@example.com", PasswordHash: "old", CreatedAt: t0}
	if err := s.AddUser(ctx, second); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	for _, h := range []string{"a", "b"} {
		if err := s.CreateSession(ctx, &beet.Session{IDHash: sessionHash(uniq(h)), UserID: second.ID, AccountID: a.ID,
			CreatedAt: t0, LastSeenAt: t0, ExpiresAt: later}); err != nil {
			t.Fatal(err)
		}
	}
	keep := sessionHash(uniq("keep"))
	if err := s.CreateSession(ctx, &beet.Session{IDHash: keep, UserID: second.ID, AccountID: a.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: later}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserPassword(ctx, second.ID, "new", keep); err != nil {
		t.Fatal(err)
	}
	if u, err := s.FindUserByID(ctx, second.ID); err != nil || u.PasswordHash != "new" || u.Email != second.Email {
		t.Fatalf("FindUserByID after SetUserPassword = %+v, %v", u, err)
	}
	if _, err := s.FindSessionByHash(ctx, keep); err != nil {
		t.Fatalf("the session that changed the password was ended: %v", err)
	}
	// The other two sessions are gone: count by deleting expired ones far in the future.
	if n, err := s.DeleteExpiredSessions(ctx, later.Add(time.Hour), later, 100); err != nil || n < 1 {
		t.Fatalf("sessions left besides the kept one: DeleteExpiredSessions removed %d, %v", n, err)
	}
	wantCode(t, "SetUserPassword(unknown)", s.SetUserPassword(ctx, 1<<40, "x", nil), beet.ENOTFOUND)

	other := newAccount(t, s, beet.PlanFree)
	wantCode(t, "DeleteUser(another account's user)", s.DeleteUser(ctx, other.ID, second.ID), beet.ENOTFOUND)
	s2 := sessionHash(uniq("s2"))
	if err := s.CreateSession(ctx, &beet.Session{IDHash: s2, UserID: second.ID, AccountID: a.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: later}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, a.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "FindUserByID(removed)", func() error { _, err := s.FindUserByID(ctx, second.ID); return err }(), beet.ENOTFOUND)
	wantCode(t, "the removed user's session", func() error { _, err := s.FindSessionByHash(ctx, s2); return err }(), beet.ENOTFOUND)
	wantCode(t, "DeleteUser(the last user)", s.DeleteUser(ctx, a.ID, first.ID), beet.ECONFLICT)
	if users, _ := s.FindUsers(ctx, a.ID); len(users) != 1 {
		t.Fatalf("users after refusing to remove the last = %d", len(users))
	}
}

func testBeetTags(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2, b3 := newBeet(t, s, a.ID), newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	if err := s.SetBeetTags(ctx, b1.ID, []string{"billing", "prod"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBeetTags(ctx, b2.ID, []string{"prod"}); err != nil {
		t.Fatal(err)
	}
	other := newAccount(t, s, beet.PlanFree)
	ob := newBeet(t, s, other.ID)
	if err := s.SetBeetTags(ctx, ob.ID, []string{"secret-tag"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindBeetTags(ctx, []int64{b1.ID, b2.ID, b3.ID})
	want := map[int64][]string{b1.ID: {"billing", "prod"}, b2.ID: {"prod"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("FindBeetTags = %v, %v; want %v", got, err, want)
	}
	if tags, err := s.FindAccountTags(ctx, a.ID); err != nil || !reflect.DeepEqual(tags, []string{"billing", "prod"}) {
		t.Fatalf("FindAccountTags = %v, %v", tags, err)
	}
	beets, total, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Tag: "prod"})
	if err != nil || total != 2 || len(beets) != 2 || beets[0].ID != b1.ID || beets[1].ID != b2.ID {
		t.Fatalf("FindBeets(tag prod) = %d of %d, %v", len(beets), total, err)
	}
	// Replacing drops the old tags; none clears them.
	if err := s.SetBeetTags(ctx, b1.ID, []string{"billing"}); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Tag: "prod"}); total != 1 {
		t.Fatalf("after retagging, %d beets tagged prod; want 1", total)
	}
	if err := s.SetBeetTags(ctx, b2.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindBeetTags(ctx, []int64{b2.ID}); len(got) != 0 {
		t.Fatalf("cleared tags = %v", got)
	}
	wantCode(t, "SetBeetTags(unknown beet)", s.SetBeetTags(ctx, 1<<40, []string{"x"}), beet.ENOTFOUND)
	// Deleting a beet deletes its tags.
	if err := s.DeleteBeet(ctx, b1.ID); err != nil {
		t.Fatal(err)
	}
	if tags, _ := s.FindAccountTags(ctx, a.ID); len(tags) != 0 {
		t.Fatalf("tags after deleting their beet = %v", tags)
	}
}

func testBeetOrders(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	mk := func(name string, st beet.Status, last *time.Time) int64 {
		b := &beet.Beet{AccountID: a.ID, Name: name, Token: beet.NewToken(), Status: st, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModeAuto}, LastEventAt: last, CreatedAt: t0}
		if err := s.CreateBeet(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b.ID
	}
	early, late := t0.Add(-time.Hour), t0
	up := mk("b up", beet.StatusUp, &late)
	down := mk("C down", beet.StatusDown, &early)
	paused := mk("a paused", beet.StatusPaused, nil)
	// Tags: C down has billing and zz, b up has prod; a paused has none.
	for id, tags := range map[int64][]string{down: {"billing", "zz"}, up: {"prod"}} {
		if err := s.SetBeetTags(ctx, id, tags); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(o beet.BeetOrder) []int64 {
		beets, _, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Order: o})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, b := range beets {
			out = append(out, b.ID)
		}
		return out
	}
	for _, c := range []struct {
		o    beet.BeetOrder
		want []int64
	}{
		{beet.OrderCreated, []int64{up, down, paused}},
		{beet.OrderName, []int64{paused, up, down}},
		{beet.OrderStatus, []int64{down, up, paused}},
		{beet.OrderLastEvent, []int64{paused, down, up}},
		{beet.OrderTag, []int64{down, up, paused}}, // #billing before #prod, whatever the names; the untagged last
	} {
		if got := ids(c.o); !reflect.DeepEqual(got, c.want) {
			t.Errorf("order %q = %v, want %v", c.o, got, c.want)
		}
	}
}
