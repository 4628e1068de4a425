package storetest

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
)

func sessionHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func testSessions(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	users, err := s.FindUsers(ctx, a.ID)
	if err != nil || len(users) != 1 {
		t.Fatalf("FindUsers = %v, %v", users, err)
	}
	u := users[0]
	sess := &beet.Session{IDHash: sessionHash(uniq("session")), UserID: u.ID, AccountID: a.ID,
		CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "same hash again", s.CreateSession(ctx, sess), beet.ECONFLICT)
	got, err := s.FindSessionByHash(ctx, sess.IDHash)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != u.ID || got.AccountID != a.ID || string(got.IDHash) != string(sess.IDHash) {
		t.Errorf("session = %+v, want %+v", got, sess)
	}
	sameTime(t, "CreatedAt", got.CreatedAt, t0)
	sameTime(t, "ExpiresAt", got.ExpiresAt, sess.ExpiresAt)

	// Touch moves last use forward, never back.
	later := t0.Add(time.Hour)
	if err := s.TouchSession(ctx, sess.IDHash, later); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchSession(ctx, sess.IDHash, t0); err != nil {
		t.Fatal(err)
	}
	got, _ = s.FindSessionByHash(ctx, sess.IDHash)
	sameTime(t, "LastSeenAt", got.LastSeenAt, later)

	_, err = s.FindSessionByHash(ctx, sessionHash("no such session"))
	wantCode(t, "unknown session", err, beet.ENOTFOUND)
	wantCode(t, "session of an unknown user", s.CreateSession(ctx, &beet.Session{IDHash: sessionHash(uniq("x")),
		UserID: 1 << 40, AccountID: a.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0}), beet.ENOTFOUND)

	if err := s.DeleteSession(ctx, sess.IDHash); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSessionByHash(ctx, sess.IDHash)
	wantCode(t, "deleted session", err, beet.ENOTFOUND)
	if err := s.DeleteSession(ctx, sess.IDHash); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
}

func testDeleteExpiredSessions(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	users, _ := s.FindUsers(ctx, a.ID)
	add := func(name string, seen, expires time.Time) []byte {
		h := sessionHash(uniq(name))
		if err := s.CreateSession(ctx, &beet.Session{IDHash: h, UserID: users[0].ID, AccountID: a.ID,
			CreatedAt: t0, LastSeenAt: seen, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
		return h
	}
	now := t0.Add(48 * time.Hour)
	live := add("live", now, now.Add(time.Hour))
	var dead [][]byte
	for range 3 {
		dead = append(dead, add("expired", now, now.Add(-time.Microsecond)))
	}
	dead = append(dead, add("idle", t0, now.Add(time.Hour)))

	// A limit bounds each pass; passes repeat until nothing is left.
	n, err := s.DeleteExpiredSessions(ctx, now, now.Add(-24*time.Hour), 3)
	if err != nil || n != 3 {
		t.Fatalf("first pass deleted %d, %v; want 3", n, err)
	}
	n, err = s.DeleteExpiredSessions(ctx, now, now.Add(-24*time.Hour), 3)
	if err != nil || n != 1 {
		t.Fatalf("second pass deleted %d, %v; want 1", n, err)
	}
	if _, err := s.FindSessionByHash(ctx, live); err != nil {
		t.Errorf("live session gone: %v", err)
	}
	for _, h := range dead {
		_, err := s.FindSessionByHash(ctx, h)
		wantCode(t, "expired session", err, beet.ENOTFOUND)
	}
}

func testCountEventBuckets(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2, quiet := newBeet(t, s, a.ID), newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	from := t0.Truncate(time.Hour)
	// b1: 3 events in bucket 0, 1 exactly at the start of bucket 2, one
	// just before the range and one at its (exclusive) end.
	ev := []beet.Event{}
	for _, d := range []time.Duration{0, time.Minute, 59*time.Minute + 59*time.Second, 2 * time.Hour, -time.Microsecond, 4 * time.Hour} {
		e := events(b1.ID, from.Add(d), 0, 1)[0]
		ev = append(ev, e)
	}
	ev = append(ev, events(b2.ID, from.Add(3*time.Hour+30*time.Minute), time.Second, 5)...)
	addEvents(t, s, ev)

	got, err := s.CountEventBuckets(ctx, []int64{b1.ID, b2.ID, quiet.ID}, beet.Buckets{From: from, Step: time.Hour, N: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][]int64{b1.ID: {3, 0, 1, 0}, b2.ID: {0, 0, 0, 5}}
	if len(got) != len(want) {
		t.Fatalf("counts = %v, want %v", got, want)
	}
	for id, w := range want {
		for i := range w {
			if got[id][i] != w[i] {
				t.Errorf("beet %d counts = %v, want %v", id, got[id], w)
				break
			}
		}
	}
	// Counted leaves out starts and logs, which are no runs.
	job := newBeet(t, s, a.ID)
	jev := events(job.ID, from.Add(time.Minute), time.Minute, 4)
	jev[0].Kind, jev[1].Kind, jev[2].Kind, jev[3].Kind = beet.KindStart, beet.KindPing, beet.KindLog, beet.KindFail
	addEvents(t, s, jev)
	for counted, want := range map[bool]int64{false: 4, true: 2} {
		got, err := s.CountEventBuckets(ctx, []int64{job.ID}, beet.Buckets{From: from, Step: time.Hour, N: 1, Counted: counted})
		if err != nil || got[job.ID][0] != want {
			t.Errorf("job's count (counted only: %v) = %v, %v; want %d", counted, got, err, want)
		}
	}
	if _, err := s.CountEventBuckets(ctx, []int64{b1.ID}, beet.Buckets{From: from, Step: time.Hour, N: beet.MaxBuckets + 1}); err == nil {
		t.Error("more than MaxBuckets buckets: no error")
	}
}

func testSearchBeets(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a, other := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanFree)
	mk := func(acc int64, name string) *beet.Beet {
		b := newBeet(t, s, acc)
		n := name
		if _, err := s.UpdateBeet(ctx, b.ID, beet.BeetUpdate{Name: &n}, t0); err != nil {
			t.Fatal(err)
		}
		return b
	}
	checkout := mk(a.ID, "Checkout Succeeded")
	mk(a.ID, "Nightly backup")
	pct := mk(a.ID, "100% done_ok")
	mk(other.ID, "checkout (other account)")
	for _, tc := range []struct {
		q    string
		want []int64
	}{
		{"checkout", []int64{checkout.ID}},
		{"  CHECKOUT ", []int64{checkout.ID}},
		{"%", []int64{pct.ID}},
		{"_", []int64{pct.ID}},
		{"nothing like it", nil},
	} {
		got, total, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Name: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if total != len(tc.want) || len(got) != len(tc.want) {
			t.Errorf("search %q: %d beets (total %d), want %v", tc.q, len(got), total, tc.want)
			continue
		}
		for i := range got {
			if got[i].ID != tc.want[i] {
				t.Errorf("search %q: beet %d, want %d", tc.q, got[i].ID, tc.want[i])
			}
		}
	}
	all, total, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Limit: 2})
	if err != nil || len(all) != 2 || total != 3 {
		t.Errorf("empty search, limit 2: %d beets, total %d, %v; want 2 of 3", len(all), total, err)
	}
}

func testFirstRunSetup(t *testing.T, s beet.Store) {
	ctx := t.Context()
	// Each case gets a fresh store: no account yet.
	if exist, err := s.AccountsExist(ctx); err != nil || exist {
		t.Fatalf("AccountsExist on a new store = %v, %v", exist, err)
	}
	// Eight setups race; exactly one wins.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			a := &beet.Account{Plan: beet.PlanFree, CreatedAt: t0}
			u := &beet.User{Email: uniq("first") + "@example.com", PasswordHash: "$argon2id$x", CreatedAt: t0}
			errs[i] = s.CreateFirstAccount(ctx, a, u)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			wantCode(t, "losing setup", err, beet.ECONFLICT)
		}
	}
	if won != 1 {
		t.Fatalf("%d setups succeeded, want exactly 1", won)
	}
	if exist, err := s.AccountsExist(ctx); err != nil || !exist {
		t.Errorf("AccountsExist after setup = %v, %v", exist, err)
	}
	accounts, _ := s.FindAccounts(ctx)
	u := &beet.User{AccountID: accounts[0].ID, Email: uniq("second") + "@example.com", PasswordHash: "$argon2id$x", CreatedAt: t0}
	if err := s.AddUser(ctx, u); err != nil || u.ID == 0 {
		t.Fatalf("AddUser: %v (id %d)", err, u.ID)
	}
	wantCode(t, "same email again", s.AddUser(ctx, &beet.User{AccountID: accounts[0].ID, Email: u.Email, PasswordHash: "x", CreatedAt: t0}), beet.ECONFLICT)
	wantCode(t, "unknown account", s.AddUser(ctx, &beet.User{AccountID: 1 << 40, Email: uniq("x") + "@example.com", PasswordHash: "x", CreatedAt: t0}), beet.ENOTFOUND)
}
