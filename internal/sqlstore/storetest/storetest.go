// Package storetest is a conformance suite for beet.Store implementations.
// It imports only the domain package and the standard library, so any
// store (SQLite, PostgreSQL, a future one) runs the same checks.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// Run runs every conformance test as a parallel subtest. open must return a
// fresh, migrated, empty store for each call and close it in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) beet.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s beet.Store)
	}{
		{"PingAndSchema", testPingAndSchema},
		{"CreateAccount", testCreateAccount},
		{"DuplicateEmail", testDuplicateEmail},
		{"SetAccountPlan", testSetAccountPlan},
		{"NotFound", testNotFound},
		{"APIKeys", testAPIKeys},
		{"BeetCreateFind", testBeetCreateFind},
		{"TokenConflict", testTokenConflict},
		{"TokenRotation", testTokenRotation},
		{"FindBeets", testFindBeets},
		{"UpdateBeet", testUpdateBeet},
		{"UpdateBeetRedetect", testUpdateBeetRedetect},
		{"FlipPages", testFlipPages},
		{"DeleteBeetCascades", testDeleteBeetCascades},
		{"SetBeetStatus", testSetBeetStatus},
		{"AddEventsIdempotent", testAddEventsIdempotent},
		{"AddEventsLastEventAt", testAddEventsLastEventAt},
		{"AddEventsDeletedBeet", testAddEventsDeletedBeet},
		{"AddEventsRotatedToken", testAddEventsRotatedToken},
		{"ObservedEvents", testObservedEvents},
		{"Deadlines", testDeadlines},
		{"Incidents", testIncidents},
		{"FindEvents", testFindEvents},
		{"FindEventsLimits", testFindEventsLimits},
		{"EventFields", testEventFields},
		{"Problems", testProblems},
		{"Retention", testRetention},
		{"DeleteEventsBefore", testDeleteEventsBefore},
		{"Sessions", testSessions}, {"DeleteExpiredSessions", testDeleteExpiredSessions}, // sessions.go
		{"CountEventBuckets", testCountEventBuckets}, {"SearchBeets", testSearchBeets}, {"FirstRunSetup", testFirstRunSetup},
	}
	tests = append(tests, channelTests...)
	tests = append(tests, signalTests...)
	tests = append(tests, userTests...)
	tests = append(tests, retentionTests...)
	tests = append(tests, sweepTests...)
	tests = append(tests, statusPageTests...)
	tests = append(tests, importTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// t0 is a fixed instant with microseconds, away from any zero value.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

var seq atomic.Int64

// uniq returns a string unique within the test binary.
func uniq(prefix string) string { return fmt.Sprintf("%s%d", prefix, seq.Add(1)) }

// eventID returns a distinct event ID.
func eventID() beet.EventID {
	var id beet.EventID
	n := seq.Add(1)
	for i := range 8 {
		id[15-i] = byte(n >> (8 * i))
	}
	id[0] = 0xbe
	return id
}

func newAccount(t *testing.T, s beet.Store, plan beet.Plan) *beet.Account {
	t.Helper()
	a := &beet.Account{Plan: plan, CreatedAt: t0}
	u := &beet.User{Email: uniq("user") + "@example.com", PasswordHash: "$argon2id$x", CreatedAt: t0}
	if err := s.CreateAccount(t.Context(), a, u); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a
}

func newBeet(t *testing.T, s beet.Store, accountID int64) *beet.Beet {
	t.Helper()
	b := &beet.Beet{
		AccountID: accountID,
		Name:      uniq("beet "),
		Token:     beet.NewToken(),
		Status:    beet.StatusNew,
		Timezone:  "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto},
		CreatedAt: t0,
		UpdatedAt: t0,
	}
	if err := s.CreateBeet(t.Context(), b); err != nil {
		t.Fatalf("CreateBeet: %v", err)
	}
	return b
}

// events returns n events of the beet, received step apart from start.
func events(beetID int64, start time.Time, step time.Duration, n int) []beet.Event {
	out := make([]beet.Event, n)
	for i := range out {
		out[i] = beet.Event{ID: eventID(), BeetID: beetID, ReceivedAt: start.Add(time.Duration(i) * step), Method: "GET", UserAgent: "curl/8"}
	}
	return out
}

func addEvents(t *testing.T, s beet.Store, ev []beet.Event) {
	t.Helper()
	if err := s.AddEvents(t.Context(), ev, nil); err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := beet.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("%s = %v, want %v in UTC", what, got, want)
	}
}

func sameTimePtr(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", what, got, want)
	default:
		sameTime(t, what, *got, *want)
	}
}

func sameBeet(t *testing.T, got, want *beet.Beet) {
	t.Helper()
	if got.ID != want.ID || got.AccountID != want.AccountID || got.Name != want.Name ||
		got.Description != want.Description || got.Token != want.Token || got.Status != want.Status ||
		got.StatusReason != want.StatusReason || got.Timezone != want.Timezone ||
		got.Detection != want.Detection || got.AllowBots != want.AllowBots {
		t.Errorf("beet = %+v\nwant %+v", got, want)
	}
	sameTimePtr(t, "LastEventAt", got.LastEventAt, want.LastEventAt)
	sameTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	sameTime(t, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
}

func ptr[T any](v T) *T { return &v }

func testPingAndSchema(t *testing.T, s beet.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	ok, err := s.SchemaCurrent(t.Context())
	if err != nil || !ok {
		t.Fatalf("SchemaCurrent = %v, %v; want true on a migrated store", ok, err)
	}
}

func testCreateAccount(t *testing.T, s beet.Store) {
	ctx := t.Context()
	created := t0.In(time.FixedZone("EET", 2*3600))
	a := &beet.Account{Plan: beet.PlanStarter, CreatedAt: created}
	u := &beet.User{Email: "Alice.Example@Example.COM", PasswordHash: "$argon2id$v=19$abc", CreatedAt: created}
	if err := s.CreateAccount(ctx, a, u); err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 || u.ID == 0 || u.AccountID != a.ID {
		t.Fatalf("IDs not set: account %d, user %d of account %d", a.ID, u.ID, u.AccountID)
	}
	got, err := s.FindAccountByID(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.Plan != beet.PlanStarter {
		t.Errorf("account = %+v, want %+v", got, a)
	}
	sameTime(t, "account CreatedAt", got.CreatedAt, created)

	for _, email := range []string{"alice.example@example.com", "ALICE.EXAMPLE@EXAMPLE.COM"} {
		gu, err := s.FindUserByEmail(ctx, email)
		if err != nil {
			t.Fatalf("FindUserByEmail(%q): %v", email, err)
		}
		if gu.ID != u.ID || gu.AccountID != a.ID || gu.PasswordHash != u.PasswordHash || gu.Email != "alice.example@example.com" {
			t.Errorf("FindUserByEmail(%q) = %+v, want user %d with the email lower-cased", email, gu, u.ID)
		}
		sameTime(t, "user CreatedAt", gu.CreatedAt, created)
	}
	users, err := s.FindUsers(ctx, a.ID)
	if err != nil || len(users) != 1 || users[0].ID != u.ID {
		t.Fatalf("FindUsers = %v, %v; want the one user", users, err)
	}
	other := newAccount(t, s, beet.PlanFree)
	accounts, err := s.FindAccounts(ctx)
	if err != nil || len(accounts) != 2 || accounts[0].ID != a.ID || accounts[1].ID != other.ID {
		t.Fatalf("FindAccounts = %v, %v; want accounts %d and %d in order", accounts, err, a.ID, other.ID)
	}
	if users, err := s.FindUsers(ctx, other.ID); err != nil || len(users) != 1 || users[0].ID == u.ID {
		t.Fatalf("FindUsers(other) = %v, %v; want only the other account's user", users, err)
	}
}

func testDuplicateEmail(t *testing.T, s beet.Store) {
	ctx := t.Context()
	if err := s.CreateAccount(ctx, &beet.Account{Plan: beet.PlanFree}, &beet.User{Email: "bob@example.com", PasswordHash: "h"}); err != nil {
		t.Fatal(err)
	}
	err := s.CreateAccount(ctx, &beet.Account{Plan: beet.PlanPro}, &beet.User{Email: "BOB@Example.com", PasswordHash: "h"})
	wantCode(t, "CreateAccount with a taken email in other case", err, beet.ECONFLICT)
	if !strings.Contains(beet.ErrorField(err)+beet.ErrorMessage(err), "email") {
		t.Errorf("conflict %v does not name the email", err)
	}
	// One transaction: the account of the refused user must not exist.
	accounts, err := s.FindAccounts(ctx)
	if err != nil || len(accounts) != 1 {
		t.Fatalf("FindAccounts = %d accounts, %v; want 1 (the failed CreateAccount must roll back)", len(accounts), err)
	}
}

func testSetAccountPlan(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newAccount(t, s, beet.PlanFree)
	if err := s.SetAccountPlan(ctx, a.ID, beet.PlanEnterprise); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindAccountByID(ctx, a.ID); err != nil || got.Plan != beet.PlanEnterprise {
		t.Fatalf("plan after SetAccountPlan = %v, %v; want enterprise", got, err)
	}
	if got, err := s.FindAccountByID(ctx, b.ID); err != nil || got.Plan != beet.PlanFree {
		t.Fatalf("other account's plan = %v, %v; want free", got, err)
	}
}

func testNotFound(t *testing.T, s beet.Store) {
	ctx := t.Context()
	const missing = 987654321
	for name, err := range map[string]error{
		"SetAccountPlan": s.SetAccountPlan(ctx, missing, beet.PlanPro),
		"RevokeAPIKey":   s.RevokeAPIKey(ctx, missing, t0),
		"DeleteBeet":     s.DeleteBeet(ctx, missing),
		"SetBeetToken":   s.SetBeetToken(ctx, missing, beet.NewToken(), t0),
		"SetBeetStatus":  s.SetBeetStatus(ctx, &beet.Flip{BeetID: missing, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst}),
		"AddProblem":     s.AddProblem(ctx, &beet.Problem{BeetID: missing, At: t0, Kind: beet.ProblemBadBody}),
		"CreateBeet":     s.CreateBeet(ctx, &beet.Beet{AccountID: missing, Name: "x", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}),
		"CreateAPIKey":   s.CreateAPIKey(ctx, &beet.APIKey{AccountID: missing, Name: "k", Prefix: "bk_x", Hash: []byte("h")}),
	} {
		wantCode(t, name, err, beet.ENOTFOUND)
	}
	check := func(name string, v any, err error) {
		t.Helper()
		wantCode(t, name, err, beet.ENOTFOUND)
		if fmt.Sprint(v) != "<nil>" {
			t.Errorf("%s returned %v with its error, want nil", name, v)
		}
	}
	a, err := s.FindAccountByID(ctx, missing)
	check("FindAccountByID", a, err)
	u, err := s.FindUserByEmail(ctx, "nobody@example.com")
	check("FindUserByEmail", u, err)
	k, err := s.FindAPIKeyByHash(ctx, []byte("no such hash"))
	check("FindAPIKeyByHash", k, err)
	k, err = s.FindAPIKeyByID(ctx, missing)
	check("FindAPIKeyByID", k, err)
	b, err := s.FindBeetByID(ctx, missing)
	check("FindBeetByID", b, err)
	b, err = s.FindBeetByToken(ctx, beet.NewToken())
	check("FindBeetByToken", b, err)
	b, err = s.UpdateBeet(ctx, missing, beet.BeetUpdate{Name: ptr("x")}, t0)
	check("UpdateBeet", b, err)
}

func testAPIKeys(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	other := newAccount(t, s, beet.PlanFree)
	k1 := &beet.APIKey{AccountID: a.ID, Name: "deploy", Prefix: "bk_AbCd", Hash: []byte{0, 1, 2, 255}, CreatedAt: t0}
	k2 := &beet.APIKey{AccountID: a.ID, Name: "ci", Prefix: "bk_EfGh", Hash: []byte{9, 9}, CreatedAt: t0.Add(time.Second)}
	for _, k := range []*beet.APIKey{k1, k2} {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		if k.ID == 0 {
			t.Fatal("CreateAPIKey did not set the ID")
		}
	}
	err := s.CreateAPIKey(ctx, &beet.APIKey{AccountID: other.ID, Name: "dup", Prefix: "bk_x", Hash: []byte{0, 1, 2, 255}})
	wantCode(t, "CreateAPIKey with a stored hash", err, beet.ECONFLICT)

	got, err := s.FindAPIKeyByHash(ctx, []byte{0, 1, 2, 255})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k1.ID || got.AccountID != a.ID || got.Name != "deploy" || got.Prefix != "bk_AbCd" ||
		string(got.Hash) != string(k1.Hash) || got.RevokedAt != nil {
		t.Errorf("FindAPIKeyByHash = %+v, want %+v", got, k1)
	}
	sameTime(t, "key CreatedAt", got.CreatedAt, t0)
	if got, err := s.FindAPIKeyByID(ctx, k2.ID); err != nil || got.Name != "ci" {
		t.Fatalf("FindAPIKeyByID = %+v, %v", got, err)
	}
	keys, err := s.FindAPIKeys(ctx, a.ID)
	if err != nil || len(keys) != 2 || keys[0].ID != k1.ID || keys[1].ID != k2.ID {
		t.Fatalf("FindAPIKeys = %v, %v; want k1, k2", keys, err)
	}
	if keys, err := s.FindAPIKeys(ctx, other.ID); err != nil || len(keys) != 0 {
		t.Fatalf("FindAPIKeys(other account) = %v, %v; want none", keys, err)
	}

	revoked := t0.Add(time.Hour + 7*time.Microsecond)
	if err := s.RevokeAPIKey(ctx, k1.ID, revoked); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAPIKey(ctx, k1.ID, revoked.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	got, err = s.FindAPIKeyByHash(ctx, k1.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sameTimePtr(t, "RevokedAt after revoking twice", got.RevokedAt, &revoked)
	if got, _ := s.FindAPIKeyByID(ctx, k2.ID); got == nil || got.RevokedAt != nil {
		t.Errorf("revoking k1 touched k2: %+v", got)
	}

	// The scope survives the round trip; keys are read-write unless made read-only.
	ro := &beet.APIKey{AccountID: a.ID, Name: "grafana", Prefix: "bk_Ro", Hash: []byte{7, 7, 7}, CreatedAt: t0, ReadOnly: true}
	if err := s.CreateAPIKey(ctx, ro); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindAPIKeyByHash(ctx, ro.Hash); err != nil || !got.ReadOnly {
		t.Errorf("read-only key read back as %+v, %v", got, err)
	}
	if got, err := s.FindAPIKeyByID(ctx, k2.ID); err != nil || got.ReadOnly {
		t.Errorf("read-write key read back as %+v, %v", got, err)
	}
}

func testBeetCreateFind(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := &beet.Beet{
		AccountID:    a.ID,
		Name:         "nightly backup ✓",
		Description:  "pg_dump to S3",
		Token:        beet.NewToken(),
		Status:       beet.StatusNew,
		StatusReason: "waiting for the first event",
		Timezone:     "Europe/Riga",
		Detection:    beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "Europe/Riga", GraceSeconds: 600},
		AllowBots:    true,
		CreatedAt:    t0,
		UpdatedAt:    t0.Add(time.Microsecond),
	}
	want := *b
	if err := s.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.ID == 0 {
		t.Fatal("CreateBeet did not set the ID")
	}
	want.ID = b.ID
	got, err := s.FindBeetByID(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameBeet(t, got, &want)
	got, err = s.FindBeetByToken(ctx, b.Token)
	if err != nil {
		t.Fatal(err)
	}
	sameBeet(t, got, &want)
	// A second beet gets its own ID and defaults (AllowBots false).
	b2 := newBeet(t, s, a.ID)
	if b2.ID == b.ID {
		t.Fatal("two beets share an ID")
	}
	if got, err := s.FindBeetByID(ctx, b2.ID); err != nil || got.AllowBots || got.Detection.Mode != beet.ModeAuto {
		t.Fatalf("second beet = %+v, %v", got, err)
	}
}

func testTokenConflict(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1 := newBeet(t, s, a.ID)
	b2 := newBeet(t, s, a.ID)
	dup := *b1
	dup.ID = 0
	wantCode(t, "CreateBeet with a taken token", s.CreateBeet(ctx, &dup), beet.ECONFLICT)
	wantCode(t, "SetBeetToken to another beet's token", s.SetBeetToken(ctx, b2.ID, b1.Token, t0), beet.ECONFLICT)
	if got, err := s.FindBeetByToken(ctx, b1.Token); err != nil || got.ID != b1.ID {
		t.Fatalf("token now finds %+v, %v; want beet %d", got, err, b1.ID)
	}
}

func testTokenRotation(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	old, fresh := b.Token, beet.NewToken()
	at := t0.Add(time.Minute)
	if err := s.SetBeetToken(ctx, b.ID, fresh, at); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindBeetByToken(ctx, old)
	wantCode(t, "FindBeetByToken(old token)", err, beet.ENOTFOUND)
	got, err := s.FindBeetByToken(ctx, fresh)
	if err != nil || got.ID != b.ID {
		t.Fatalf("FindBeetByToken(new token) = %+v, %v; want beet %d", got, err, b.ID)
	}
	sameTime(t, "UpdatedAt after rotation", got.UpdatedAt, at)
	// The old token is free again and can go to another beet.
	b2 := newBeet(t, s, a.ID)
	if err := s.SetBeetToken(ctx, b2.ID, old, at); err != nil {
		t.Fatalf("reusing a rotated-away token: %v", err)
	}
}

func testFindBeets(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	other := newAccount(t, s, beet.PlanFree)
	var mine []*beet.Beet
	for i := range 5 {
		mine = append(mine, newBeet(t, s, a.ID))
		if i < 2 {
			newBeet(t, s, other.ID)
		}
	}
	ids := func(bs []*beet.Beet) []int64 {
		out := make([]int64, len(bs))
		for i, b := range bs {
			out[i] = b.ID
		}
		return out
	}
	for _, tc := range []struct {
		f     beet.BeetFilter
		want  []*beet.Beet
		total int
	}{
		{beet.BeetFilter{AccountID: &a.ID}, mine, 5},
		{beet.BeetFilter{AccountID: &a.ID, Limit: 2}, mine[:2], 5},
		{beet.BeetFilter{AccountID: &a.ID, Limit: 2, Offset: 2}, mine[2:4], 5},
		{beet.BeetFilter{AccountID: &a.ID, Limit: 2, Offset: 4}, mine[4:], 5},
		{beet.BeetFilter{AccountID: &a.ID, Limit: 2, Offset: 10}, nil, 5},
		{beet.BeetFilter{AccountID: &other.ID}, nil, 2},
		{beet.BeetFilter{}, nil, 7},
	} {
		got, total, err := s.FindBeets(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if total != tc.total {
			t.Errorf("FindBeets(%+v) total = %d, want %d", tc.f, total, tc.total)
		}
		if tc.want != nil && fmt.Sprint(ids(got)) != fmt.Sprint(ids(tc.want)) {
			t.Errorf("FindBeets(%+v) = %v, want %v (oldest first)", tc.f, ids(got), ids(tc.want))
		}
		if tc.want == nil && tc.f.Offset == 0 && len(got) != tc.total {
			t.Errorf("FindBeets(%+v) returned %d beets, want %d", tc.f, len(got), tc.total)
		}
		if tc.f.Offset >= tc.total && len(got) != 0 {
			t.Errorf("FindBeets(%+v) past the end returned %d beets", tc.f, len(got))
		}
	}
	if err := s.SetBeetStatus(ctx, &beet.Flip{BeetID: mine[3].ID, At: t0, From: beet.StatusNew, To: beet.StatusPaused, Kind: beet.FlipManual}); err != nil {
		t.Fatal(err)
	}
	got, total, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Status: ptr(beet.StatusPaused)})
	if err != nil || total != 1 || len(got) != 1 || got[0].ID != mine[3].ID {
		t.Fatalf("FindBeets(paused) = %v, %d, %v; want beet %d only", ids(got), total, err, mine[3].ID)
	}
	if _, total, _ := s.FindBeets(ctx, beet.BeetFilter{AccountID: &a.ID, Status: ptr(beet.StatusNew)}); total != 4 {
		t.Errorf("FindBeets(new) total = %d, want 4", total)
	}
	if _, total, _ := s.FindBeets(ctx, beet.BeetFilter{AccountID: &other.ID, Status: ptr(beet.StatusPaused)}); total != 0 {
		t.Errorf("FindBeets(other, paused) total = %d, want 0", total)
	}

	// Names are searched and sorted without case in every alphabet.
	u := newAccount(t, s, beet.PlanFree)
	var named []int64
	for _, name := range []string{"Übersicht Zahlung", "Оплата заказа", "zebra", "apple"} {
		b := newBeet(t, s, u.ID)
		if _, err := s.UpdateBeet(ctx, b.ID, beet.BeetUpdate{Name: ptr(name)}, t0); err != nil {
			t.Fatal(err)
		}
		named = append(named, b.ID)
	}
	for q, want := range map[string]int64{"übersicht": named[0], "ÜBERSICHT": named[0], "оплата": named[1], "ЗАКАЗА": named[1]} {
		if got, _, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &u.ID, Name: q}); err != nil || len(got) != 1 || got[0].ID != want {
			t.Errorf("FindBeets(name %q) = %v, %v; want beet %d", q, ids(got), err, want)
		}
	}
	sorted, _, _ := s.FindBeets(ctx, beet.BeetFilter{AccountID: &u.ID, Order: beet.OrderName})
	if fmt.Sprint(ids(sorted)) != fmt.Sprint([]int64{named[3], named[2], named[0], named[1]}) {
		t.Errorf("FindBeets by name = %v, want apple, zebra, Übersicht, Оплата: %v", ids(sorted), named)
	}
}

func testUpdateBeet(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	want := *b

	steps := []struct {
		upd   beet.BeetUpdate
		apply func(*beet.Beet)
	}{
		{beet.BeetUpdate{Name: ptr("renamed")}, func(b *beet.Beet) { b.Name = "renamed" }},
		{beet.BeetUpdate{Description: ptr("a description")}, func(b *beet.Beet) { b.Description = "a description" }},
		{beet.BeetUpdate{Description: ptr("")}, func(b *beet.Beet) { b.Description = "" }},
		{beet.BeetUpdate{Timezone: ptr("America/New_York")}, func(b *beet.Beet) { b.Timezone = "America/New_York" }},
		{beet.BeetUpdate{AllowBots: ptr(true)}, func(b *beet.Beet) { b.AllowBots = true }},
		{
			beet.BeetUpdate{Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 60}},
			func(b *beet.Beet) {
				b.Detection = beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 60}
			},
		},
		{beet.BeetUpdate{}, func(*beet.Beet) {}},
	}
	for i, step := range steps {
		at := t0.Add(time.Duration(i+1)*time.Minute + time.Microsecond)
		step.apply(&want)
		want.UpdatedAt = at
		got, err := s.UpdateBeet(ctx, b.ID, step.upd, at)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		sameBeet(t, got, &want)
		stored, err := s.FindBeetByID(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameBeet(t, stored, &want)
	}
	if got, _ := s.FindBeetByID(ctx, other.ID); got == nil || got.Name != other.Name || !got.UpdatedAt.Equal(t0) {
		t.Errorf("UpdateBeet touched another beet: %+v", got)
	}
}

// testUpdateBeetRedetect: with Redetect, the update hands it the beet as
// it stood and as updated (its state and last event as stored), and
// writes what it decides with the update in one transaction: status,
// reason, since, deadline and model, and its flips with their messages.
// An error writes nothing.
func testUpdateBeetRedetect(t *testing.T, s beet.Store) {
	ctx := t.Context()
	c, b := upBeetWithWebhook(t, s)
	addEvents(t, s, events(b.ID, t0, time.Minute, 1))
	due := t0.Add(time.Hour)
	if err := s.SetBeetDue(ctx, b.ID, &due); err != nil {
		t.Fatal(err)
	}
	period := beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}
	at := t0.Add(10*time.Minute + 123*time.Nanosecond)
	var seen [2]beet.Beet
	upd := beet.BeetUpdate{Name: ptr("tightened"), Detection: &period, Redetect: func(was beet.Beet, nb *beet.Beet) ([]beet.Flip, error) {
		seen = [2]beet.Beet{was, *nb}
		nb.Status, nb.StatusReason, nb.StatusSince, nb.DueAt, nb.Model = beet.StatusDown, "overdue", at, nil, []byte{8, 1, 2}
		return []beet.Flip{{At: at, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "overdue"}}, nil
	}}
	got, err := s.UpdateBeet(ctx, b.ID, upd, at)
	if err != nil {
		t.Fatal(err)
	}
	was, now := seen[0], seen[1]
	if was.Detection != b.Detection || was.Name != b.Name || now.Detection != period || now.Name != "tightened" ||
		was.Status != beet.StatusUp || now.Status != beet.StatusUp || now.DueAt == nil || !now.DueAt.Equal(due) ||
		now.LastEventAt == nil || !now.LastEventAt.Equal(t0) || !now.StatusSince.Equal(t0) {
		t.Fatalf("Redetect was given\n was %+v\n b   %+v", was, now)
	}
	stored, err := s.FindBeetByID(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*beet.Beet{got, stored} {
		if x.Name != "tightened" || x.Status != beet.StatusDown || x.StatusReason != "overdue" || x.DueAt != nil ||
			string(x.Model) != string([]byte{8, 1, 2}) {
			t.Errorf("after UpdateBeet with Redetect: %+v", x)
		}
		sameTime(t, "StatusSince", x.StatusSince, at.Truncate(time.Microsecond))
	}
	flips, err := s.FindFlips(ctx, b.ID, 0)
	if err != nil || len(flips) != 2 || flips[0].ID == 0 || flips[0].To != beet.StatusDown || flips[0].Reason != "overdue" {
		t.Fatalf("FindFlips = %+v, %v; want the Redetect flip first", flips, err)
	}
	sameTime(t, "flip At", flips[0].At, at.Truncate(time.Microsecond))
	if ds, err := s.FindDeliveries(ctx, c.ID, 0); err != nil || len(ds) != 1 || ds[0].Event != beet.EventDown || ds[0].FlipID != flips[0].ID {
		t.Errorf("FindDeliveries = %+v, %v; want the flip's beet.down", ds, err)
	}

	// A deadline set, no flip; the model cleared.
	next := t0.Add(2 * time.Hour)
	upd = beet.BeetUpdate{Redetect: func(_ beet.Beet, nb *beet.Beet) ([]beet.Flip, error) {
		nb.Status, nb.StatusReason, nb.DueAt, nb.Model = beet.StatusUp, "up again", &next, nil
		return nil, nil
	}}
	if _, err := s.UpdateBeet(ctx, b.ID, upd, at); err != nil {
		t.Fatal(err)
	}
	stored, _ = s.FindBeetByID(ctx, b.ID)
	if stored.Status != beet.StatusUp || stored.StatusReason != "up again" || stored.Model != nil {
		t.Errorf("after a Redetect without flips: %+v", stored)
	}
	sameTimePtr(t, "DueAt", stored.DueAt, &next)
	if flips, _ := s.FindFlips(ctx, b.ID, 0); len(flips) != 2 {
		t.Errorf("%d flips, want still 2", len(flips))
	}

	// An error writes nothing, the update's own fields included.
	upd = beet.BeetUpdate{Name: ptr("not written"), Redetect: func(_ beet.Beet, nb *beet.Beet) ([]beet.Flip, error) {
		nb.Status = beet.StatusDown
		return nil, errors.New("detector failed")
	}}
	if _, err := s.UpdateBeet(ctx, b.ID, upd, at); err == nil {
		t.Fatal("UpdateBeet succeeded though Redetect failed")
	}
	if stored, _ = s.FindBeetByID(ctx, b.ID); stored.Name != "tightened" || stored.Status != beet.StatusUp {
		t.Errorf("a failed Redetect wrote: %+v", stored)
	}
	_, err = s.UpdateBeet(ctx, b.ID+1000, beet.BeetUpdate{Redetect: upd.Redetect}, at)
	wantCode(t, "UpdateBeet with Redetect of a missing beet", err, beet.ENOTFOUND)
}

// testFlipPages: FindFlipPage pages back through a beet's flips, newest
// first, by the last flip's At and ID, with none skipped or repeated when
// several share one instant; Until alone is exclusive.
func testFlipPages(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	offsets := []time.Duration{0, time.Second, time.Second, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	var want []int64 // newest first
	status := beet.StatusNew
	for _, off := range offsets {
		to := beet.StatusDown
		if status != beet.StatusUp {
			to = beet.StatusUp
		}
		f := flip(t, s, b.ID, t0.Add(off), status, to, beet.FlipManual)
		want = append([]int64{f.ID}, want...)
		status = to
	}
	flip(t, s, other.ID, t0.Add(time.Second), beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	ids := func(fs []*beet.Flip) []int64 {
		var out []int64
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	all, err := s.FindFlipPage(ctx, beet.FlipFilter{BeetID: b.ID})
	if err != nil || fmt.Sprint(ids(all)) != fmt.Sprint(want) {
		t.Fatalf("FindFlipPage = %v, %v; want %v", ids(all), err, want)
	}
	var got []int64
	f := beet.FlipFilter{BeetID: b.ID, Limit: 2}
	for range len(want) {
		page, err := s.FindFlipPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if len(page) < f.Limit {
			break
		}
		last := page[len(page)-1]
		at, id := last.At, last.ID
		f.Until, f.BeforeID = &at, &id
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("paged by 2: %v, want %v", got, want)
	}
	until := t0.Add(3 * time.Second)
	if page, err := s.FindFlipPage(ctx, beet.FlipFilter{BeetID: b.ID, Until: &until}); err != nil || fmt.Sprint(ids(page)) != fmt.Sprint(want[2:]) {
		t.Errorf("until %v: %v, %v; want %v", until, ids(page), err, want[2:])
	}
	if first, err := s.FindFlips(ctx, b.ID, 3); err != nil || fmt.Sprint(ids(first)) != fmt.Sprint(want[:3]) {
		t.Errorf("FindFlips(3) = %v, %v; want %v", ids(first), err, want[:3])
	}
}

func testDeleteBeetCascades(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, keep := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	// More events than one delete batch is likely to take, so a batched
	// delete must loop.
	addEvents(t, s, events(b.ID, t0, time.Millisecond, 12000))
	addEvents(t, s, events(keep.ID, t0, time.Second, 3))
	for _, id := range []int64{b.ID, keep.ID} {
		if err := s.AddProblem(ctx, &beet.Problem{BeetID: id, At: t0, Kind: beet.ProblemBadBody, Detail: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetBeetStatus(ctx, &beet.Flip{BeetID: id, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteBeet(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindBeetByID(ctx, b.ID)
	wantCode(t, "FindBeetByID after DeleteBeet", err, beet.ENOTFOUND)
	_, err = s.FindBeetByToken(ctx, b.Token)
	wantCode(t, "FindBeetByToken after DeleteBeet", err, beet.ENOTFOUND)
	wantCode(t, "DeleteBeet twice", s.DeleteBeet(ctx, b.ID), beet.ENOTFOUND)
	far := t0.Add(1000 * time.Hour)
	if n, err := s.CountEventsBefore(ctx, b.ID, far); err != nil || n != 0 {
		t.Errorf("events left after DeleteBeet: %d, %v", n, err)
	}
	if p, err := s.FindProblems(ctx, b.ID, 0); err != nil || len(p) != 0 {
		t.Errorf("problems left after DeleteBeet: %d, %v", len(p), err)
	}
	if f, err := s.FindFlips(ctx, b.ID, 0); err != nil || len(f) != 0 {
		t.Errorf("flips left after DeleteBeet: %d, %v", len(f), err)
	}
	// The other beet keeps everything.
	if n, _ := s.CountEventsBefore(ctx, keep.ID, far); n != 3 {
		t.Errorf("other beet has %d events, want 3", n)
	}
	if p, _ := s.FindProblems(ctx, keep.ID, 0); len(p) != 1 {
		t.Errorf("other beet has %d problems, want 1", len(p))
	}
	if f, _ := s.FindFlips(ctx, keep.ID, 0); len(f) != 1 {
		t.Errorf("other beet has %d flips, want 1", len(f))
	}
}

func testSetBeetStatus(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	first := &beet.Flip{BeetID: b.ID, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first event"}
	if err := s.SetBeetStatus(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first.ID == 0 {
		t.Fatal("SetBeetStatus did not set the flip ID")
	}
	// A second writer that still believes the beet is new loses.
	stale := &beet.Flip{BeetID: b.ID, At: t0, From: beet.StatusNew, To: beet.StatusDown, Kind: beet.FlipSilence}
	wantCode(t, "SetBeetStatus from a stale status", s.SetBeetStatus(ctx, stale), beet.ECONFLICT)
	got, err := s.FindBeetByID(ctx, b.ID)
	if err != nil || got.Status != beet.StatusUp || got.StatusReason != "first event" {
		t.Fatalf("beet after CAS = %+v, %v; want up with reason %q", got, err, "first event")
	}
	down := &beet.Flip{BeetID: b.ID, At: t0.Add(time.Hour + time.Microsecond), From: beet.StatusUp, To: beet.StatusDown,
		Kind: beet.FlipSilence, Reason: "no event for 2h", Observed: ptr(0.0), Expected: ptr(12.5)}
	if err := s.SetBeetStatus(ctx, down); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindBeetByID(ctx, b.ID); got.Status != beet.StatusDown || got.StatusReason != "no event for 2h" {
		t.Errorf("beet after second flip = %s %q", got.Status, got.StatusReason)
	}
	flips, err := s.FindFlips(ctx, b.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(flips) != 2 || flips[0].ID != down.ID || flips[1].ID != first.ID {
		t.Fatalf("FindFlips = %+v, want the down flip then the first one", flips)
	}
	f := flips[0]
	if f.BeetID != b.ID || f.From != beet.StatusUp || f.To != beet.StatusDown || f.Kind != beet.FlipSilence ||
		f.Reason != "no event for 2h" || f.Observed == nil || *f.Observed != 0 || f.Expected == nil || *f.Expected != 12.5 {
		t.Errorf("flip = %+v, want %+v", f, down)
	}
	sameTime(t, "flip At", f.At, down.At)
	if flips[1].Observed != nil || flips[1].Expected != nil {
		t.Errorf("flip without numbers came back with %v, %v", flips[1].Observed, flips[1].Expected)
	}
	if flips, _ := s.FindFlips(ctx, b.ID, 1); len(flips) != 1 || flips[0].ID != down.ID {
		t.Errorf("FindFlips(limit 1) = %v, want only the newest", flips)
	}
}

func testAddEventsIdempotent(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2 := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	batch := append(events(b1.ID, t0, time.Second, 3), events(b2.ID, t0, time.Second, 2)...)
	addEvents(t, s, batch)
	addEvents(t, s, batch) // a replay, e.g. after a timeout whose commit did land
	// A batch that overlaps the first one partly.
	addEvents(t, s, append(batch[:1:1], events(b1.ID, t0.Add(time.Hour), time.Second, 1)...))
	for id, want := range map[int64]int{b1.ID: 4, b2.ID: 2} {
		got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: id})
		if err != nil || len(got) != want {
			t.Errorf("beet %d has %d events (%v), want %d after replays", id, len(got), err, want)
		}
	}
	if err := s.AddEvents(ctx, nil, nil); err != nil {
		t.Errorf("AddEvents(nil) = %v", err)
	}
}

func testAddEventsLastEventAt(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	if got, _ := s.FindBeetByID(ctx, b.ID); got.LastEventAt != nil {
		t.Fatalf("new beet has LastEventAt %v", got.LastEventAt)
	}
	last := func() *time.Time {
		got, err := s.FindBeetByID(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastEventAt
	}
	newest := t0.Add(10*time.Second + 3*time.Microsecond)
	// The newest event is in the middle of the batch, not at its end.
	addEvents(t, s, []beet.Event{
		{ID: eventID(), BeetID: b.ID, ReceivedAt: t0, Method: "GET"},
		{ID: eventID(), BeetID: b.ID, ReceivedAt: newest, Method: "GET"},
		{ID: eventID(), BeetID: b.ID, ReceivedAt: t0.Add(time.Second), Method: "GET"},
	})
	sameTimePtr(t, "LastEventAt", last(), &newest)
	// A late, older event must not move it back.
	addEvents(t, s, events(b.ID, t0.Add(-time.Hour), time.Second, 1))
	sameTimePtr(t, "LastEventAt after an older event", last(), &newest)
	later := newest.Add(time.Microsecond)
	addEvents(t, s, events(b.ID, later, time.Second, 1))
	sameTimePtr(t, "LastEventAt after a newer event", last(), &later)
}

func testAddEventsDeletedBeet(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	gone, live := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	if err := s.DeleteBeet(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	// Events buffered before the beet was deleted must not sink the batch.
	err := s.AddEvents(ctx, append(events(gone.ID, t0, time.Second, 2), events(live.ID, t0, time.Second, 2)...), nil)
	if err != nil {
		t.Fatalf("AddEvents with a deleted beet's events: %v", err)
	}
	if got, _ := s.FindEvents(ctx, beet.EventFilter{BeetID: live.ID}); len(got) != 2 {
		t.Errorf("live beet has %d events, want 2", len(got))
	}
	if got, _ := s.FindEvents(ctx, beet.EventFilter{BeetID: gone.ID}); len(got) != 0 {
		t.Errorf("deleted beet has %d events, want 0", len(got))
	}
}

// testAddEventsRotatedToken: an event that carries the token it arrived
// with is stored only if its beet still has that token at commit.
func testAddEventsRotatedToken(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	old := b.Token
	withToken := func(evs []beet.Event, tok string) []beet.Event {
		for i := range evs {
			evs[i].Token = tok
		}
		return evs
	}
	addEvents(t, s, withToken(events(b.ID, t0, time.Second, 2), old))
	newToken := beet.NewToken()
	if err := s.SetBeetToken(ctx, b.ID, newToken, t0); err != nil {
		t.Fatal(err)
	}
	late := t0.Add(time.Hour)
	// One batch holds events with the old token, the new one, and none.
	batch := append(withToken(events(b.ID, late, time.Second, 3), old), withToken(events(b.ID, t0.Add(time.Minute), time.Second, 1), newToken)...)
	batch = append(batch, events(b.ID, t0.Add(2*time.Minute), time.Second, 1)...)
	addEvents(t, s, batch)
	for i, e := range batch {
		if e.Stale != (i < 3) {
			t.Errorf("event %d: Stale = %v; only the old token's events are marked", i, e.Stale)
		}
	}
	got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(got) != 4 {
		t.Fatalf("beet has %d events (%v), want 4: 2 before rotation, 1 with the new token, 1 without a token", len(got), err)
	}
	for _, e := range got {
		if e.ReceivedAt.Equal(late) || e.Token != "" {
			t.Errorf("event %+v: the old token recorded after rotation, or a token was stored", e)
		}
	}
	// The rejected events must not move last_event_at either.
	want := t0.Add(2 * time.Minute)
	cur, _ := s.FindBeetByID(ctx, b.ID)
	sameTimePtr(t, "LastEventAt", cur.LastEventAt, &want)
}

// testObservedEvents: AddEvents hands each beet's new events to the
// observer with the beet as stored, and stores what it changed and the
// flips it returned in the same transaction.
func testObservedEvents(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2 := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	if got, _ := s.FindBeetByID(ctx, b1.ID); !got.StatusSince.Equal(got.CreatedAt) {
		t.Errorf("a new beet's StatusSince = %v, want its creation %v", got.StatusSince, got.CreatedAt)
	}
	var seen []beet.EventSpan
	var seenBeets []beet.Beet
	observe := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		seen, seenBeets = append(seen, sp), append(seenBeets, *b)
		if b.ID != b1.ID {
			return nil // b2: nothing changes but its last event
		}
		due := sp.Last.Add(time.Hour)
		b.Status, b.StatusReason, b.StatusSince = beet.StatusUp, "first", sp.First
		b.DueAt, b.Model = &due, []byte{1, 2, 3, 0, 255}
		return []beet.Flip{{At: sp.First, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first"}}
	}
	ev := func(beetID int64, at time.Time) beet.Event { return events(beetID, at, 0, 1)[0] }
	stale := ev(b2.ID, t0.Add(9*time.Minute))
	stale.Token = "bt_not-the-token"
	batch := []beet.Event{
		ev(b1.ID, t0.Add(2*time.Minute)), ev(b1.ID, t0.Add(time.Minute)),
		ev(b2.ID, t0.Add(3*time.Minute)), stale,
		ev(1<<40, t0), // a deleted beet
	}
	if err := s.AddEvents(ctx, batch, observe); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seenBeets[0].ID != b1.ID || seenBeets[1].ID != b2.ID {
		t.Fatalf("observer saw %v for beets %v; want b1 then b2", seen, seenBeets)
	}
	want := beet.EventSpan{First: t0.Add(time.Minute), Last: t0.Add(2 * time.Minute), Count: 2}
	if !seen[0].First.Equal(want.First) || !seen[0].Last.Equal(want.Last) || seen[0].Count != 2 {
		t.Errorf("b1's span = %+v, want %+v", seen[0], want)
	}
	if seen[1].Count != 1 || !seen[1].Last.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("b2's span = %+v: an event with a stale token was counted", seen[1])
	}
	if seenBeets[0].Status != beet.StatusNew || seenBeets[0].LastEventAt != nil {
		t.Errorf("the observer got b1 as %s, last event %v; want it as stored", seenBeets[0].Status, seenBeets[0].LastEventAt)
	}
	got, _ := s.FindBeetByID(ctx, b1.ID)
	if got.Status != beet.StatusUp || got.StatusReason != "first" || !got.StatusSince.Equal(want.First) ||
		got.DueAt == nil || !got.DueAt.Equal(want.Last.Add(time.Hour)) || string(got.Model) != "\x01\x02\x03\x00\xff" {
		t.Errorf("b1 after observed events: %+v", got)
	}
	sameTimePtr(t, "LastEventAt", got.LastEventAt, &want.Last)
	flips, _ := s.FindFlips(ctx, b1.ID, 10)
	if len(flips) != 1 || flips[0].BeetID != b1.ID || flips[0].To != beet.StatusUp || !flips[0].At.Equal(want.First) {
		t.Errorf("b1's flips = %v, want the observer's one", flips)
	}
	got2, _ := s.FindBeetByID(ctx, b2.ID)
	if got2.Status != beet.StatusNew || got2.DueAt != nil || got2.Model != nil {
		t.Errorf("b2 changed though the observer changed nothing: %+v", got2)
	}
	// An observer that clears the deadline and model clears them.
	clear := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip { b.DueAt, b.Model = nil, nil; return nil }
	if err := s.AddEvents(ctx, events(b1.ID, t0.Add(4*time.Minute), 0, 1), clear); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindBeetByID(ctx, b1.ID); got.DueAt != nil || got.Model != nil || got.Status != beet.StatusUp {
		t.Errorf("after a clearing observer: %+v", got)
	}
}

// flipDueBeet applies one deadline flip through ApplyDue; a change that
// was not applied is ECONFLICT.
func flipDueBeet(ctx context.Context, s beet.Store, f *beet.Flip, due time.Time, next *time.Time) error {
	c := []beet.DueChange{{BeetID: f.BeetID, Due: due, Flip: f, Next: next}}
	if err := s.ApplyDue(ctx, c); err != nil {
		return err
	}
	if !c[0].Applied {
		return beet.Errorf(beet.ECONFLICT, "beet %d moved on", f.BeetID)
	}
	return nil
}

// moveBeetDue moves one deadline through ApplyDue.
func moveBeetDue(ctx context.Context, s beet.Store, id int64, due time.Time, next *time.Time) (bool, error) {
	c := []beet.DueChange{{BeetID: id, Due: due, Next: next}}
	err := s.ApplyDue(ctx, c)
	return c[0].Applied, err
}

// testIncidents: one open incident at a time; a hold is a compare and set
// on the deadline; Back counts held beets with events since the start.
func testIncidents(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2 := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	for _, b := range []*beet.Beet{b1, b2} {
		if err := s.SetBeetStatus(ctx, &beet.Flip{BeetID: b.ID, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first"}); err != nil {
			t.Fatal(err)
		}
		due := t0.Add(time.Hour)
		if err := s.SetBeetDue(ctx, b.ID, &due); err != nil {
			t.Fatal(err)
		}
	}
	if err := flipDueBeet(ctx, s, &beet.Flip{BeetID: b2.ID, At: t0.Add(time.Hour), From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "silent"}, t0.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountSilences(ctx, t0.Add(30*time.Minute)); n != 1 || err != nil {
		t.Errorf("CountSilences = %d, %v; want 1", n, err)
	}
	if n, _ := s.CountSilences(ctx, t0.Add(2*time.Hour)); n != 0 {
		t.Errorf("CountSilences counted a silence before its window: %d", n)
	}
	if n, err := s.CountWatched(ctx); n != 1 || err != nil {
		t.Errorf("CountWatched = %d, %v; want 1 (b1)", n, err)
	}
	if ids, err := s.SilentAccounts(ctx, t0.Add(30*time.Minute), 3); len(ids) != 1 || ids[0] != a.ID || err != nil {
		t.Errorf("SilentAccounts = %v, %v; want [%d]", ids, err, a.ID)
	}
	if ids, _ := s.SilentAccounts(ctx, t0.Add(2*time.Hour), 3); len(ids) != 0 {
		t.Errorf("SilentAccounts counted a silence before its window: %v", ids)
	}
	if n, err := s.CountWatchedAccounts(ctx); n != 1 || err != nil {
		t.Errorf("CountWatchedAccounts = %d, %v; want 1 (b1's)", n, err)
	}
	if inc, err := s.OpenIncident(ctx); inc != nil || err != nil {
		t.Fatalf("OpenIncident with none = %v, %v", inc, err)
	}
	start := t0.Add(2 * time.Hour)
	inc := &beet.Incident{StartedAt: start, Reason: "many silent"}
	if err := s.StartIncident(ctx, inc); err != nil || inc.ID == 0 {
		t.Fatalf("StartIncident = %v, id %d", err, inc.ID)
	}
	if err := s.StartIncident(ctx, &beet.Incident{StartedAt: start, Reason: "again"}); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Errorf("a second open incident = %v, want conflict", err)
	}
	next := start.Add(5 * time.Minute)
	if ok, err := s.HoldBeet(ctx, inc.ID, b1.ID, t0, next); ok || err != nil {
		t.Errorf("HoldBeet on a deadline that is not the beet's = %v, %v; want false", ok, err)
	}
	if ok, err := s.HoldBeet(ctx, inc.ID, b1.ID, t0.Add(time.Hour), next); !ok || err != nil {
		t.Fatalf("HoldBeet = %v, %v", ok, err)
	}
	if got, _ := s.FindBeetByID(ctx, b1.ID); got.Status != beet.StatusUp || got.DueAt == nil || !got.DueAt.Equal(next) {
		t.Errorf("held beet: %s, due %v", got.Status, got.DueAt)
	}
	if ok, err := s.HoldBeet(ctx, inc.ID, b1.ID, next, next.Add(5*time.Minute)); !ok || err != nil {
		t.Fatalf("holding again = %v, %v", ok, err)
	}
	if got, _ := s.OpenIncident(ctx); got == nil || got.Held != 1 || got.Back != 0 || got.Reason != "many silent" {
		t.Fatalf("open incident = %+v, want 1 held, 0 back", got)
	}
	addEvents(t, s, events(b1.ID, start.Add(time.Minute), 0, 1))
	if got, _ := s.OpenIncident(ctx); got.Back != 1 {
		t.Errorf("after the held beet's event: back %d, want 1", got.Back)
	}
	if err := s.EndIncident(ctx, inc.ID, next, "flowing again"); err != nil {
		t.Fatal(err)
	}
	if err := s.EndIncident(ctx, inc.ID, next, "twice"); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Errorf("ending a closed incident = %v, want conflict", err)
	}
	all, err := s.FindIncidents(ctx, a.ID, 10)
	if err != nil || len(all) != 1 || all[0].EndedAt == nil || !all[0].EndedAt.Equal(next) || all[0].EndReason != "flowing again" ||
		all[0].Held != 1 || all[0].Back != 1 {
		t.Fatalf("FindIncidents = %+v, %v", all, err)
	}
	// Another account sees the incident, but none of a's held beets.
	other := newAccount(t, s, beet.PlanFree)
	if all, err := s.FindIncidents(ctx, other.ID, 10); err != nil || len(all) != 1 || all[0].Held != 0 || all[0].Back != 0 {
		t.Fatalf("FindIncidents for another account = %+v, %v; want the incident with 0 held", all, err)
	}
	if err := s.StartIncident(ctx, &beet.Incident{StartedAt: next, Reason: "next"}); err != nil {
		t.Errorf("a new incident after the last closed: %v", err)
	}
}

// testDeadlines: due beets are found earliest first through their
// deadline, and a deadline flip is a compare and set on status and
// deadline, so a moved deadline or a second sweeper flips nothing.
func testDeadlines(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b1, b2, b3 := newBeet(t, s, a.ID), newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	if got, _ := s.FindBeetByID(ctx, b1.ID); got.DueAt != nil {
		t.Fatalf("new beet has a deadline %v", got.DueAt)
	}
	d1, d2, d3 := t0.Add(2*time.Minute), t0.Add(time.Minute), t0.Add(time.Hour)
	for id, d := range map[int64]time.Time{b1.ID: d1, b2.ID: d2, b3.ID: d3} {
		if err := s.SetBeetDue(ctx, id, &d); err != nil {
			t.Fatal(err)
		}
	}
	due, err := s.FindDueBeets(ctx, t0.Add(30*time.Minute), 10)
	if err != nil || len(due) != 2 || due[0].ID != b2.ID || due[1].ID != b1.ID {
		t.Fatalf("FindDueBeets = %v, %v; want b2 then b1", due, err)
	}
	sameTimePtr(t, "DueAt", due[0].DueAt, &d2)
	if due, _ := s.FindDueBeets(ctx, t0.Add(30*time.Minute), 1); len(due) != 1 || due[0].ID != b2.ID {
		t.Errorf("FindDueBeets(limit 1) = %v", due)
	}
	if err := s.SetBeetDue(ctx, b3.ID, nil); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.FindDueBeets(ctx, t0.Add(48*time.Hour), 10); len(due) != 2 {
		t.Errorf("a cleared deadline is still due: %v", due)
	}
	if err := s.SetBeetDue(ctx, 1<<40, &d1); !beet.IsNotFound(err) {
		t.Errorf("SetBeetDue on a missing beet = %v, want not found", err)
	}

	// b1 goes up, then its deadline passes: the flip takes it down and
	// clears the deadline, once.
	up := &beet.Flip{BeetID: b1.ID, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first event"}
	if err := s.SetBeetStatus(ctx, up); err != nil {
		t.Fatal(err)
	}
	down := &beet.Flip{BeetID: b1.ID, At: d1, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "no event"}
	if err := flipDueBeet(ctx, s, down, d1, nil); err != nil {
		t.Fatalf("FlipDueBeet = %v", err)
	}
	got, _ := s.FindBeetByID(ctx, b1.ID)
	if got.Status != beet.StatusDown || got.DueAt != nil || got.StatusReason != "no event" || down.ID == 0 {
		t.Fatalf("after the deadline flip: %+v", got)
	}
	if !got.StatusSince.Equal(d1) {
		t.Errorf("StatusSince = %v after the deadline flip, want %v", got.StatusSince, d1)
	}
	again := *down
	again.ID = 0
	if err := flipDueBeet(ctx, s, &again, d1, nil); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Errorf("a second sweeper's flip = %v, want conflict", err)
	}
	// b2: an event moved the deadline after the sweeper read it.
	if err := s.SetBeetStatus(ctx, &beet.Flip{BeetID: b2.ID, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first"}); err != nil {
		t.Fatal(err)
	}
	moved := d2.Add(time.Hour)
	if err := s.SetBeetDue(ctx, b2.ID, &moved); err != nil {
		t.Fatal(err)
	}
	stale := &beet.Flip{BeetID: b2.ID, At: d2, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "no event"}
	if err := flipDueBeet(ctx, s, stale, d2, nil); beet.ErrorCode(err) != beet.ECONFLICT {
		t.Errorf("flip on a moved deadline = %v, want conflict", err)
	}
	if got, _ := s.FindBeetByID(ctx, b2.ID); got.Status != beet.StatusUp {
		t.Errorf("b2 is %s after a stale deadline, want up", got.Status)
	}
	// MoveBeetDue moves a deadline only if it is still the one read.
	if ok, err := moveBeetDue(ctx, s, b2.ID, d2, nil); ok || err != nil {
		t.Errorf("MoveBeetDue on a moved deadline = %v, %v; want false", ok, err)
	}
	later := moved.Add(time.Minute)
	if ok, err := moveBeetDue(ctx, s, b2.ID, moved, &later); !ok || err != nil {
		t.Errorf("MoveBeetDue = %v, %v; want true", ok, err)
	}
	if got, _ := s.FindBeetByID(ctx, b2.ID); got.DueAt == nil || !got.DueAt.Equal(later) {
		t.Errorf("deadline %v after MoveBeetDue, want %v", got.DueAt, later)
	}
	if flips, _ := s.FindFlips(ctx, b2.ID, 10); len(flips) != 1 {
		t.Errorf("b2 has %d flips, want only the first-event one", len(flips))
	}
	// One ApplyDue with a flip that applies, a stale flip and a move: each
	// change stands alone.
	d3b := t0.Add(3 * time.Hour)
	if err := s.SetBeetDue(ctx, b3.ID, &d3b); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBeetStatus(ctx, &beet.Flip{BeetID: b3.ID, At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "first"}); err != nil {
		t.Fatal(err)
	}
	goDown := &beet.Flip{At: d3b, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "silent"}
	staleDown := &beet.Flip{At: d3b, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "stale"}
	later2 := later.Add(time.Hour)
	batch := []beet.DueChange{
		{BeetID: b3.ID, Due: d3b, Flip: goDown},
		{BeetID: b1.ID, Due: d1, Flip: staleDown}, // b1 is down already, with no deadline
		{BeetID: b2.ID, Due: later, Next: &later2},
	}
	if err := s.ApplyDue(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if !batch[0].Applied || goDown.ID == 0 || goDown.BeetID != b3.ID || batch[1].Applied || staleDown.ID != 0 || !batch[2].Applied {
		t.Errorf("ApplyDue batch: applied %v %v %v, flip IDs %d %d", batch[0].Applied, batch[1].Applied, batch[2].Applied, goDown.ID, staleDown.ID)
	}
	if got, _ := s.FindBeetByID(ctx, b3.ID); got.Status != beet.StatusDown || got.DueAt != nil || !got.StatusSince.Equal(d3b) {
		t.Errorf("b3 after ApplyDue: %s, due %v, since %v", got.Status, got.DueAt, got.StatusSince)
	}
	if got, _ := s.FindBeetByID(ctx, b2.ID); got.DueAt == nil || !got.DueAt.Equal(later2) || got.Status != beet.StatusUp {
		t.Errorf("b2 after ApplyDue: %s, due %v", got.Status, got.DueAt)
	}
}

func testFindEvents(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	ev := events(b.ID, t0, time.Second, 10) // ev[i] at t0 + i s
	addEvents(t, s, ev)
	addEvents(t, s, events(other.ID, t0, time.Second, 10))
	at := func(i int) time.Time { return ev[i].ReceivedAt }
	for _, tc := range []struct {
		name  string
		f     beet.EventFilter
		first int // index of the newest event expected
		n     int
	}{
		{"all", beet.EventFilter{BeetID: b.ID}, 9, 10},
		{"limit", beet.EventFilter{BeetID: b.ID, Limit: 3}, 9, 3},
		{"since inclusive", beet.EventFilter{BeetID: b.ID, Since: ptr(at(7))}, 9, 3},
		{"until exclusive", beet.EventFilter{BeetID: b.ID, Until: ptr(at(3))}, 2, 3},
		{"window", beet.EventFilter{BeetID: b.ID, Since: ptr(at(2)), Until: ptr(at(5))}, 4, 3},
		{"one microsecond past", beet.EventFilter{BeetID: b.ID, Since: ptr(at(7).Add(time.Microsecond))}, 9, 2},
		{"empty window", beet.EventFilter{BeetID: b.ID, Since: ptr(at(5)), Until: ptr(at(5))}, 0, 0},
	} {
		got, err := s.FindEvents(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.n {
			t.Errorf("%s: %d events, want %d", tc.name, len(got), tc.n)
			continue
		}
		for i, e := range got {
			if want := ev[tc.first-i]; e.ID != want.ID || !e.ReceivedAt.Equal(want.ReceivedAt) || e.BeetID != b.ID {
				t.Errorf("%s: event %d = %x at %v, want %x at %v (newest first)", tc.name, i, e.ID, e.ReceivedAt, want.ID, want.ReceivedAt)
			}
		}
	}
	// Paging back with Until = oldest seen visits every event once.
	seen := 0
	f := beet.EventFilter{BeetID: b.ID, Limit: 4}
	for {
		page, err := s.FindEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		seen += len(page)
		f.Until = &page[len(page)-1].ReceivedAt
	}
	if seen != 10 {
		t.Errorf("paging back saw %d events, want 10", seen)
	}
	// Seven events of one microsecond (a batch) and one before: paging back
	// with Until and BeforeID, the oldest seen, visits each once, in ID
	// order; Until alone would skip the rest of the microsecond.
	same := newBeet(t, s, a.ID)
	batch := append(events(same.ID, t0, 0, 7), events(same.ID, t0.Add(-time.Second), 0, 1)...)
	addEvents(t, s, batch)
	ids := map[beet.EventID]bool{}
	f = beet.EventFilter{BeetID: same.ID, Limit: 3}
	for pages := 0; pages < 10; pages++ {
		page, err := s.FindEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for i, e := range page {
			if ids[e.ID] {
				t.Errorf("event %s seen twice", e.ID)
			}
			ids[e.ID] = true
			if i > 0 && e.ReceivedAt.Equal(page[i-1].ReceivedAt) && string(e.ID[:]) > string(page[i-1].ID[:]) {
				t.Errorf("events of one microsecond not newest ID first: %s after %s", e.ID, page[i-1].ID)
			}
		}
		last := page[len(page)-1]
		f.Until, f.BeforeID = &last.ReceivedAt, &last.ID
	}
	if len(ids) != len(batch) {
		t.Errorf("paging back with BeforeID saw %d of %d events", len(ids), len(batch))
	}
	if got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: 987654321}); err != nil || len(got) != 0 {
		t.Errorf("FindEvents(unknown beet) = %d events, %v", len(got), err)
	}
}

func testFindEventsLimits(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	addEvents(t, s, events(b.ID, t0, time.Millisecond, beet.MaxPageLimit+5))
	for _, tc := range []struct{ limit, want int }{
		{0, beet.DefaultPageLimit},
		{-1, beet.DefaultPageLimit},
		{7, 7},
		{beet.MaxPageLimit + 1, beet.MaxPageLimit},
		{1 << 30, beet.MaxPageLimit},
	} {
		got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: tc.limit})
		if err != nil || len(got) != tc.want {
			t.Errorf("FindEvents(Limit %d) = %d events, %v; want %d", tc.limit, len(got), err, tc.want)
		}
	}
}

func testEventFields(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	riga := time.FixedZone("EET", 2*3600)
	// Microseconds must survive exactly, whatever the zone given.
	at := time.Date(2026, 1, 2, 3, 4, 5, 999999000, riga)
	in := []beet.Event{
		{ID: beet.EventID{0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xfe}, BeetID: b.ID, ReceivedAt: at,
			Value: nil, Method: "GET", UserAgent: "Mozilla/5.0 (X11; Linux) ünïcode"},
		{ID: eventID(), BeetID: b.ID, ReceivedAt: at.Add(time.Microsecond), Value: ptr(0.0), Method: "POST", UserAgent: ""},
		{ID: eventID(), BeetID: b.ID, ReceivedAt: at.Add(2 * time.Microsecond), Value: ptr(-1234.5678e-3), Method: "HEAD"},
	}
	addEvents(t, s, in)
	got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(got) != 3 {
		t.Fatalf("FindEvents = %d, %v", len(got), err)
	}
	for i, g := range got {
		w := in[2-i]
		if g.ID != w.ID || g.BeetID != w.BeetID || g.Method != w.Method || g.UserAgent != w.UserAgent {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
		sameTime(t, "ReceivedAt", g.ReceivedAt, w.ReceivedAt)
		switch {
		case (g.Value == nil) != (w.Value == nil):
			t.Errorf("event %d Value = %v, want %v (nil and 0 differ)", i, g.Value, w.Value)
		case g.Value != nil && *g.Value != *w.Value:
			t.Errorf("event %d Value = %v, want %v", i, *g.Value, *w.Value)
		}
	}
}

func testProblems(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	if err := s.AddProblem(ctx, &beet.Problem{BeetID: other.ID, At: t0, Kind: beet.ProblemRateLimited, Detail: "keep me"}); err != nil {
		t.Fatal(err)
	}
	const n = beet.MaxProblemsPerBeet + 5
	var added []*beet.Problem
	for i := range n {
		p := &beet.Problem{BeetID: b.ID, At: t0.Add(time.Duration(i) * time.Second), Kind: beet.ProblemBadValue, Detail: fmt.Sprintf("problem %d", i)}
		if err := s.AddProblem(ctx, p); err != nil {
			t.Fatal(err)
		}
		if p.ID == 0 {
			t.Fatal("AddProblem did not set the ID")
		}
		added = append(added, p)
	}
	got, err := s.FindProblems(ctx, b.ID, beet.MaxPageLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != beet.MaxProblemsPerBeet {
		t.Fatalf("beet keeps %d problems, want the newest %d", len(got), beet.MaxProblemsPerBeet)
	}
	for i, p := range got {
		w := added[n-1-i]
		if p.ID != w.ID || p.Detail != w.Detail || p.Kind != beet.ProblemBadValue || p.BeetID != b.ID {
			t.Fatalf("problem %d = %+v, want %+v (newest first)", i, p, w)
		}
		sameTime(t, "problem At", p.At, w.At)
	}
	if got, _ := s.FindProblems(ctx, b.ID, 2); len(got) != 2 || got[0].ID != added[n-1].ID {
		t.Errorf("FindProblems(limit 2) = %v", got)
	}
	if got, _ := s.FindProblems(ctx, other.ID, 0); len(got) != 1 || got[0].Detail != "keep me" {
		t.Errorf("trimming one beet's problems touched another's: %v", got)
	}
}

func testRetention(t *testing.T, s beet.Store) {
	ctx := t.Context()
	cutoff := t0
	free, pro := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanPro)
	fOld1 := newBeet(t, s, free.ID)
	fNew := newBeet(t, s, free.ID)
	fEdge := newBeet(t, s, free.ID)
	fOld2 := newBeet(t, s, free.ID)
	pOld := newBeet(t, s, pro.ID)
	newBeet(t, s, free.ID)                                                      // no events at all
	addEvents(t, s, events(fOld1.ID, cutoff.Add(-time.Hour), time.Minute, 5))   // 5 old
	addEvents(t, s, events(fNew.ID, cutoff.Add(time.Second), time.Minute, 5))   // none old
	addEvents(t, s, events(fEdge.ID, cutoff, time.Minute, 2))                   // at the cutoff: not before it
	addEvents(t, s, events(fOld2.ID, cutoff.Add(-time.Microsecond), 0, 1))      // one just before
	addEvents(t, s, events(pOld.ID, cutoff.Add(-24*time.Hour), time.Minute, 3)) // old, but another plan
	addEvents(t, s, events(fOld1.ID, cutoff.Add(time.Hour), time.Minute, 2))    // fOld1 also has new ones

	ids := func(p beet.Plan, after int64, limit int) string {
		got, err := s.BeetsWithEventsBefore(ctx, p, cutoff, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	want := fmt.Sprint([]int64{fOld1.ID, fOld2.ID})
	if got := ids(beet.PlanFree, 0, 10); got != want {
		t.Errorf("BeetsWithEventsBefore(free) = %s, want %s", got, want)
	}
	if got, want := ids(beet.PlanFree, 0, 1), fmt.Sprint([]int64{fOld1.ID}); got != want {
		t.Errorf("BeetsWithEventsBefore(free, limit 1) = %s, want %s", got, want)
	}
	if got, want := ids(beet.PlanFree, fOld1.ID, 10), fmt.Sprint([]int64{fOld2.ID}); got != want {
		t.Errorf("BeetsWithEventsBefore(free, after %d) = %s, want %s", fOld1.ID, got, want)
	}
	if got, want := ids(beet.PlanFree, fOld2.ID, 10), "[]"; got != want {
		t.Errorf("BeetsWithEventsBefore(free, after last) = %s, want %s", got, want)
	}
	if got, want := ids(beet.PlanPro, 0, 10), fmt.Sprint([]int64{pOld.ID}); got != want {
		t.Errorf("BeetsWithEventsBefore(pro) = %s, want %s", got, want)
	}
	if got := ids(beet.PlanStarter, 0, 10); got != "[]" {
		t.Errorf("BeetsWithEventsBefore(starter) = %s, want []", got)
	}
	for _, tc := range []struct {
		id   int64
		want int64
	}{{fOld1.ID, 5}, {fNew.ID, 0}, {fEdge.ID, 0}, {fOld2.ID, 1}, {pOld.ID, 3}} {
		if n, err := s.CountEventsBefore(ctx, tc.id, cutoff); err != nil || n != tc.want {
			t.Errorf("CountEventsBefore(beet %d) = %d, %v; want %d", tc.id, n, err, tc.want)
		}
	}
	// A plan change moves the account's beets to the other plan's sweep.
	if err := s.SetAccountPlan(ctx, pro.ID, beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(beet.PlanFree, fOld2.ID, 10), fmt.Sprint([]int64{pOld.ID}); got != want {
		t.Errorf("after plan change, BeetsWithEventsBefore(free) = %s, want %s", got, want)
	}
}

func testDeleteEventsBefore(t *testing.T, s beet.Store) {
	ctx := t.Context()
	cutoff := t0
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	old := events(b.ID, cutoff.Add(-time.Hour), time.Minute, 5)
	addEvents(t, s, old)
	addEvents(t, s, events(b.ID, cutoff, time.Minute, 3)) // at and after the cutoff: kept
	addEvents(t, s, events(other.ID, cutoff.Add(-time.Hour), time.Minute, 4))

	for _, step := range []struct {
		limit     int
		deleted   int64
		remaining int64
	}{{2, 2, 3}, {10, 3, 0}, {10, 0, 0}} {
		n, err := s.DeleteEventsBefore(ctx, b.ID, cutoff, step.limit)
		if err != nil || n != step.deleted {
			t.Fatalf("DeleteEventsBefore(limit %d) = %d, %v; want %d", step.limit, n, err, step.deleted)
		}
		if left, _ := s.CountEventsBefore(ctx, b.ID, cutoff); left != step.remaining {
			t.Fatalf("after deleting %d, %d old events left, want %d", n, left, step.remaining)
		}
	}
	got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(got) != 3 {
		t.Fatalf("beet keeps %d events, %v; want the 3 at or after the cutoff", len(got), err)
	}
	for _, e := range got {
		if e.ReceivedAt.Before(cutoff) {
			t.Errorf("event at %v survived the clean-up", e.ReceivedAt)
		}
	}
	if n, _ := s.CountEventsBefore(ctx, other.ID, cutoff); n != 4 {
		t.Errorf("other beet has %d old events, want 4 (clean-up is per beet)", n)
	}
}
