package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

var cheapHash = &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}

func openService(t *testing.T, opts service.Options) (*service.Service, beet.Store) {
	t.Helper()
	db := testdb.New(t, "sqlite")
	opts.PasswordParams = cheapHash
	return service.New(db, opts), db
}

func TestPasswordHash(t *testing.T) {
	h := service.HashPassword("correct horse", *cheapHash)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") || strings.Contains(h, "correct horse") {
		t.Fatalf("hash %q", h)
	}
	if !service.CheckPassword("correct horse", h) {
		t.Fatal("right password refused")
	}
	if service.CheckPassword("correct hors", h) || service.CheckPassword("", h) {
		t.Fatal("wrong password accepted")
	}
	if h2 := service.HashPassword("correct horse", *cheapHash); h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, bad := range []string{"", "plain", "$argon2id$v=19$m=64,t=1,p=1$xx$", strings.Replace(h, "argon2id", "argon2i", 1)} {
		if service.CheckPassword("correct horse", bad) {
			t.Errorf("CheckPassword accepted encoded hash %q", bad)
		}
	}
}

func TestCreateAccountValidation(t *testing.T) {
	svc, _ := openService(t, service.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		email, password string
		plan            beet.Plan
		field           string
	}{
		{"", "password1", beet.PlanFree, "email"},
		{"not-an-email", "password1", beet.PlanFree, "email"},
		{"Name <a@example.com>", "password1", beet.PlanFree, "email"},
		{"a@example.com", "short", beet.PlanFree, "password"},
		{"a@example.com", strings.Repeat("p", 257), beet.PlanFree, "password"},
		{"a@example.com", "password1", "gold", "plan"},
	} {
		_, _, err := svc.CreateAccount(ctx, c.email, c.password, c.plan)
		if beet.ErrorCode(err) != beet.EVALIDATION || beet.ErrorField(err) != c.field {
			t.Errorf("CreateAccount(%q, %q, %q) = %v, want validation error on %s", c.email, c.password, c.plan, err, c.field)
		}
	}
	a, key, err := svc.CreateAccount(ctx, "Ops@Example.com", "password1", beet.PlanStarter)
	if err != nil || !beet.ValidAPIKeyShape(key) || a.Plan != beet.PlanStarter {
		t.Fatalf("CreateAccount = %+v, %q, %v", a, key, err)
	}
	if id, err := svc.AuthenticateAPIKey(ctx, key); err != nil || id != a.ID {
		t.Fatalf("the new key authenticates as %d, %v", id, err)
	}
	_, _, err = svc.CreateAccount(ctx, "ops@example.COM", "password2", beet.PlanFree)
	if beet.ErrorCode(err) != beet.ECONFLICT || beet.ErrorField(err) != "email" {
		t.Fatalf("duplicate email (other case) = %v, want conflict on email", err)
	}
	if u, err := svc.Authenticate(ctx, "OPS@example.com", "password1"); err != nil || u.AccountID != a.ID {
		t.Fatalf("Authenticate = %v, %v", u, err)
	}
	for _, pw := range []string{"password2", ""} {
		if _, err := svc.Authenticate(ctx, "ops@example.com", pw); beet.ErrorCode(err) != beet.EUNAUTHORIZED {
			t.Errorf("Authenticate with %q = %v, want unauthorized", pw, err)
		}
	}
	if _, err := svc.Authenticate(ctx, "nobody@example.com", "password1"); beet.ErrorCode(err) != beet.EUNAUTHORIZED {
		t.Errorf("unknown email = %v, want unauthorized", err)
	}
}

// TestCleanupKeepsEachPlansWindow is the acceptance check: 31 days
// on, a free account's events go and a starter's stay; 367 days on, the
// starter's go and a pro's stay.
func TestCleanupKeepsEachPlansWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	svc, store := openService(t, service.Options{CleanupBatch: 3, Now: func() time.Time { return t0.AddDate(2, 0, 0) }})
	ctx := context.Background()
	beetOf := map[beet.Plan]int64{}
	for i, p := range []beet.Plan{beet.PlanFree, beet.PlanStarter, beet.PlanPro} {
		a, _, err := svc.CreateAccount(ctx, string(p)+"@example.com", "password1", p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: string(p)})
		if err != nil {
			t.Fatal(err)
		}
		beetOf[p] = b.ID
		var evs []beet.Event
		for j := range 10 { // more than one batch of 3
			ev := beet.Event{BeetID: b.ID, ReceivedAt: t0.Add(time.Duration(j) * time.Second), Method: "GET"}
			ev.ID[0], ev.ID[1] = byte(i), byte(j)
			evs = append(evs, ev)
		}
		if err := store.AddEvents(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	count := func(p beet.Plan) int {
		evs, err := store.FindEvents(ctx, beet.EventFilter{BeetID: beetOf[p], Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	deleted := func(r *service.CleanupReport, p beet.Plan) int64 {
		for _, pc := range r.Plans {
			if pc.Plan == p {
				return pc.Deleted
			}
		}
		t.Fatalf("report has no %s line: %+v", p, r)
		return 0
	}

	// Dry run: counts, deletes nothing.
	r, err := svc.Cleanup(ctx, t0.AddDate(0, 0, 31), true)
	if err != nil || !r.DryRun || deleted(r, beet.PlanFree) != 10 || r.Total != 10 || count(beet.PlanFree) != 10 {
		t.Fatalf("dry run: %+v, %v, free left %d", r, err, count(beet.PlanFree))
	}
	// 29 days on, nothing is old enough.
	if r, err := svc.Cleanup(ctx, t0.AddDate(0, 0, 29), false); err != nil || r.Total != 0 {
		t.Fatalf("29 days: %+v, %v", r, err)
	}
	r, err = svc.Cleanup(ctx, t0.AddDate(0, 0, 31), false)
	if err != nil || deleted(r, beet.PlanFree) != 10 || count(beet.PlanFree) != 0 || count(beet.PlanStarter) != 10 || count(beet.PlanPro) != 10 {
		t.Fatalf("31 days: %+v, %v; left free %d starter %d pro %d", r, err, count(beet.PlanFree), count(beet.PlanStarter), count(beet.PlanPro))
	}
	r, err = svc.Cleanup(ctx, t0.AddDate(0, 0, 367), false)
	if err != nil || deleted(r, beet.PlanStarter) != 10 || count(beet.PlanStarter) != 0 || count(beet.PlanPro) != 10 {
		t.Fatalf("367 days: %+v, %v; left starter %d pro %d", r, err, count(beet.PlanStarter), count(beet.PlanPro))
	}
	// A downgrade takes effect on the next pass.
	pro, err := store.FindBeetByID(ctx, beetOf[beet.PlanPro])
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SetPlan(ctx, pro.AccountID, beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	if r, err = svc.Cleanup(ctx, t0.AddDate(0, 0, 367), false); err != nil || deleted(r, beet.PlanFree) != 10 || count(beet.PlanPro) != 0 {
		t.Fatalf("after downgrade: %+v, %v; left %d", r, err, count(beet.PlanPro))
	}
}
