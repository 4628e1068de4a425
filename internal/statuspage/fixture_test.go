package statuspage_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/statuspage"
	"github.com/beethq/beet/internal/testdb"
)

// fixture is a real status page server over a real store: account A has a
// page "acme" over its prod and db tags and one beet by ID, a beet that
// the page does not list, notices, maintenance; account B has a beet with
// A's tag and a page of its own.
type fixture struct {
	svc    *service.Service
	store  beet.Store
	srv    *httptest.Server
	now    time.Time
	acctA  int64
	acctB  int64
	pageA  *beet.StatusPage
	beetsA map[string]*beet.Beet
	secret []string // what must never be on A's page: B's data, tokens, the unlisted beet
}

var cheapHash = &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}

// clock is the service's clock, moved by the fixture.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func newFixture(tb testing.TB, engine string) *fixture {
	tb.Helper()
	ctx := context.Background()
	db := testdb.New(tb, engine)
	now := time.Date(2026, 11, 20, 14, 30, 0, 0, time.UTC)
	c := &clock{t: now.AddDate(0, 0, -120)}
	svc := service.New(db, service.Options{Now: c.now, PasswordParams: cheapHash})
	f := &fixture{svc: svc, store: db, now: now, beetsA: map[string]*beet.Beet{}}
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanPro)
	must(err)
	b, _, err := svc.CreateAccount(ctx, "b@example.com", "password-b", beet.PlanPro)
	must(err)
	f.acctA, f.acctB = a.ID, b.ID
	add := func(acc int64, name, tags string) *beet.Beet {
		bt, err := svc.CreateBeet(ctx, acc, service.BeetInput{Name: name, Description: name + " internal description"})
		must(err)
		_, err = svc.SetBeetTags(ctx, acc, bt.ID, tags)
		must(err)
		return bt
	}
	for _, x := range []struct{ name, tags string }{
		{"Checkout API", "prod"}, {"Invoice run", "prod"}, {"Nightly backup", "db"}, {"Replica lag", "db"},
		{"Search index", ""}, {"Internal-only job", "internal"},
	} {
		f.beetsA[x.name] = add(a.ID, x.name, x.tags)
	}
	bBeet := add(b.ID, "B-secret-beet", "prod")
	flip := func(id int64, at time.Time, from, to beet.Status) {
		tb.Helper()
		must(db.SetBeetStatus(ctx, &beet.Flip{BeetID: id, At: at, From: from, To: to, Kind: beet.FlipManual, Reason: "test"}))
	}
	start := now.AddDate(0, 0, -110)
	for _, bt := range f.beetsA {
		flip(bt.ID, start, beet.StatusNew, beet.StatusUp)
	}
	flip(bBeet.ID, start, beet.StatusNew, beet.StatusUp)
	checkout := f.beetsA["Checkout API"].ID
	flip(checkout, now.AddDate(0, 0, -10).Add(-2*time.Hour), beet.StatusUp, beet.StatusDown)
	flip(checkout, now.AddDate(0, 0, -10), beet.StatusDown, beet.StatusUp)
	flip(f.beetsA["Nightly backup"].ID, now.AddDate(0, 0, -40), beet.StatusUp, beet.StatusAnomalous)
	flip(f.beetsA["Nightly backup"].ID, now.AddDate(0, 0, -40).Add(3*time.Hour), beet.StatusAnomalous, beet.StatusUp)
	flip(f.beetsA["Invoice run"].ID, now.Add(-30*time.Minute), beet.StatusUp, beet.StatusDown)
	c.set(now)

	f.pageA = &beet.StatusPage{Slug: "acme", Title: "Acme services", Description: "Jobs and APIs behind acme.example.",
		Tags: []string{"prod", "db"}, BeetIDs: []int64{f.beetsA["Search index"].ID}}
	must(svc.CreateStatusPage(ctx, a.ID, f.pageA))
	must(svc.CreateStatusNotice(ctx, a.ID, f.pageA.ID, &beet.StatusNotice{Title: "Invoices are late",
		Body: "The invoice run stopped at 14:00 UTC.\nWe are restarting it.", Severity: beet.SeverityMajor}))
	old := &beet.StatusNotice{Title: "Slow checkout", Body: "Fixed by a database index.", Severity: beet.SeverityMinor}
	must(svc.CreateStatusNotice(ctx, a.ID, f.pageA.ID, old))
	yes := true
	_, err = svc.UpdateStatusNotice(ctx, a.ID, f.pageA.ID, old.ID, service.NoticeUpdate{Resolved: &yes})
	must(err)
	ms, me := now.Add(48*time.Hour), now.Add(50*time.Hour)
	must(svc.CreateMaintenance(ctx, a.ID, &beet.MaintenanceWindow{BeetID: f.beetsA["Replica lag"].ID, Start: &ms, End: &me,
		Note: "Database upgrade to PostgreSQL 18."}))
	hidden := now.Add(24 * time.Hour)
	hiddenEnd := hidden.Add(time.Hour)
	must(svc.CreateMaintenance(ctx, a.ID, &beet.MaintenanceWindow{BeetID: f.beetsA["Internal-only job"].ID, Start: &hidden, End: &hiddenEnd,
		Note: "A-unlisted-window"}))

	bPage := &beet.StatusPage{Slug: "b-page", Title: "B-secret-title", Tags: []string{"prod"}}
	must(svc.CreateStatusPage(ctx, b.ID, bPage))
	must(svc.CreateStatusNotice(ctx, b.ID, bPage.ID, &beet.StatusNotice{Title: "B-secret-notice", Severity: beet.SeverityMajor}))
	bs := now
	must(svc.CreateMaintenance(ctx, b.ID, &beet.MaintenanceWindow{Start: &bs, End: &me, Note: "B-secret-window"}))

	f.secret = []string{"B-secret", bBeet.Token, "Internal-only", "A-unlisted-window", "internal description", "a@example.com"}
	for _, bt := range f.beetsA {
		f.secret = append(f.secret, bt.Token)
	}

	h, err := statuspage.New(svc, nil, "https://status.example.test")
	must(err)
	mux := http.NewServeMux()
	h.Register(mux)
	f.srv = httptest.NewServer(mux)
	tb.Cleanup(f.srv.Close)
	return f
}
