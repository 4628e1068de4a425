package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// statusPageTests are the conformance tests of status pages and their
// notices; Run runs them with the rest.
var statusPageTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"StatusPages", testStatusPages},
	{"StatusNotices", testStatusNotices},
	{"StatusPageBeets", testStatusPageBeets},
}

func testStatusPages(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a, other := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanFree)
	p := &beet.StatusPage{AccountID: a.ID, Slug: "acme", Title: "Acme", Description: "d", Tags: []string{"prod", "db"},
		BeetIDs: []int64{7, 3}, CreatedAt: t0, UpdatedAt: t0}
	if err := s.CreateStatusPage(ctx, p); err != nil || p.ID == 0 {
		t.Fatalf("CreateStatusPage: %v, ID %d", err, p.ID)
	}
	got, err := s.FindStatusPageBySlug(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != p.ID || got.AccountID != a.ID || got.Title != "Acme" || got.Description != "d" ||
		fmt.Sprint(got.Tags) != "[prod db]" || fmt.Sprint(got.BeetIDs) != "[7 3]" {
		t.Fatalf("FindStatusPageBySlug = %+v, want %+v (tags and IDs in their order)", got, p)
	}
	sameTime(t, "CreatedAt", got.CreatedAt, t0)
	wantCode(t, "same slug", s.CreateStatusPage(ctx, &beet.StatusPage{AccountID: other.ID, Slug: "acme", Title: "x", CreatedAt: t0, UpdatedAt: t0}), beet.ECONFLICT)
	q := &beet.StatusPage{AccountID: other.ID, Slug: "other", Title: "Other", CreatedAt: t0, UpdatedAt: t0}
	if err := s.CreateStatusPage(ctx, q); err != nil {
		t.Fatal(err)
	}
	empty, err := s.FindStatusPageByID(ctx, q.ID)
	if err != nil || empty.Tags == nil || empty.BeetIDs == nil || len(empty.Tags)+len(empty.BeetIDs) != 0 {
		t.Fatalf("a page without tags or IDs = %+v, %v: empty lists, not nil", empty, err)
	}
	list, err := s.FindStatusPages(ctx, a.ID)
	if err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("FindStatusPages = %v, %v; want only the account's page", list, err)
	}
	p.Slug, p.Title, p.Tags, p.BeetIDs, p.UpdatedAt = "acme-2", "Acme 2", []string{"x"}, nil, t0.Add(time.Hour)
	if err := s.UpdateStatusPage(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err = s.FindStatusPageByID(ctx, p.ID)
	if err != nil || got.Slug != "acme-2" || got.Title != "Acme 2" || fmt.Sprint(got.Tags) != "[x]" || len(got.BeetIDs) != 0 {
		t.Fatalf("after UpdateStatusPage: %+v, %v", got, err)
	}
	sameTime(t, "UpdatedAt", got.UpdatedAt, t0.Add(time.Hour))
	wantCode(t, "old slug", func() error { _, err := s.FindStatusPageBySlug(ctx, "acme"); return err }(), beet.ENOTFOUND)
	q.Slug = "acme-2"
	wantCode(t, "update onto a taken slug", s.UpdateStatusPage(ctx, q), beet.ECONFLICT)
	wantCode(t, "update missing", s.UpdateStatusPage(ctx, &beet.StatusPage{ID: 999999, Slug: "zzz", Title: "z"}), beet.ENOTFOUND)
	if err := s.DeleteStatusPage(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "deleted page", func() error { _, err := s.FindStatusPageByID(ctx, p.ID); return err }(), beet.ENOTFOUND)
	wantCode(t, "delete twice", s.DeleteStatusPage(ctx, p.ID), beet.ENOTFOUND)
}

func testStatusNotices(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	p := &beet.StatusPage{AccountID: a.ID, Slug: uniq("page-"), Title: "P", Tags: []string{"x"}, CreatedAt: t0, UpdatedAt: t0}
	q := &beet.StatusPage{AccountID: a.ID, Slug: uniq("page-"), Title: "Q", Tags: []string{"x"}, CreatedAt: t0, UpdatedAt: t0}
	for _, pg := range []*beet.StatusPage{p, q} {
		if err := s.CreateStatusPage(ctx, pg); err != nil {
			t.Fatal(err)
		}
	}
	add := func(pageID int64, title string) *beet.StatusNotice {
		n := &beet.StatusNotice{PageID: pageID, Title: title, Body: "b", Severity: beet.SeverityMinor, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateStatusNotice(ctx, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n1, n2, other := add(p.ID, "one"), add(p.ID, "two"), add(q.ID, "other")
	if n1.Number != 1 || n2.Number != 2 || other.Number != 1 {
		t.Fatalf("numbers %d, %d and %d on another page; want 1, 2 and 1", n1.Number, n2.Number, other.Number)
	}
	resolved := t0.Add(time.Hour)
	n1.Resolved, n1.Title, n1.Severity, n1.UpdatedAt = &resolved, "one, fixed", beet.SeverityMajor, resolved
	if err := s.UpdateStatusNotice(ctx, n1); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindStatusNoticeByID(ctx, n1.ID)
	if err != nil || got.Title != "one, fixed" || got.Severity != beet.SeverityMajor || got.Resolved == nil || got.PageID != p.ID {
		t.Fatalf("after UpdateStatusNotice: %+v, %v", got, err)
	}
	sameTime(t, "Resolved", *got.Resolved, resolved)
	list, err := s.FindStatusNotices(ctx, p.ID, 10)
	if err != nil || len(list) != 2 || list[0].ID != n2.ID || list[1].ID != n1.ID {
		t.Fatalf("FindStatusNotices = %v, %v; want the page's two, newest first", list, err)
	}
	if err := s.DeleteStatusNotice(ctx, n2.ID); err != nil {
		t.Fatal(err)
	}
	// The next number follows the highest left.
	if n3 := add(p.ID, "three"); n3.Number != 2 {
		t.Fatalf("after deleting number 2 the next is %d", n3.Number)
	}
	wantCode(t, "delete twice", s.DeleteStatusNotice(ctx, n2.ID), beet.ENOTFOUND)
	wantCode(t, "notice on a missing page", s.CreateStatusNotice(ctx, &beet.StatusNotice{PageID: 999999, Title: "x", Severity: beet.SeverityInfo}), beet.ENOTFOUND)
	if err := s.DeleteStatusPage(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "notice of a deleted page", func() error { _, err := s.FindStatusNoticeByID(ctx, n1.ID); return err }(), beet.ENOTFOUND)
}

func testStatusPageBeets(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a, other := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanFree)
	named := func(acc int64, name string, tags ...string) *beet.Beet {
		b := newBeet(t, s, acc)
		n := name
		if _, err := s.UpdateBeet(ctx, b.ID, beet.BeetUpdate{Name: &n}, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.SetBeetTags(ctx, b.ID, tags); err != nil {
			t.Fatal(err)
		}
		return b
	}
	web := named(a.ID, "Web", "prod")
	db := named(a.ID, "db", "prod", "db")
	byID := named(a.ID, "Cron")
	named(a.ID, "Elsewhere", "staging")
	otherProd := named(other.ID, "B's web", "prod")
	got, err := s.FindStatusPageBeets(ctx, a.ID, []string{"prod"}, []int64{byID.ID, otherProd.ID}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range got {
		names = append(names, b.Name)
	}
	if fmt.Sprint(names) != "[Cron db Web]" {
		t.Fatalf("FindStatusPageBeets = %v; want the account's prod beets and the one by ID, by name in any case, never another account's", names)
	}
	if fmt.Sprint(got[1].Tags) != "[db prod]" || got[1].ID != db.ID || got[1].Status != beet.StatusNew {
		t.Fatalf("db = %+v", got[1])
	}
	if got, _ := s.FindStatusPageBeets(ctx, a.ID, []string{"prod"}, nil, 1); len(got) != 1 || got[0].ID != db.ID {
		t.Fatalf("limit 1 gave %d beets; want db, the first by name", len(got))
	}
	// Past the limit the beets in trouble come first, still by name.
	byLimit := func(limit int) string {
		got, err := s.FindStatusPageBeets(ctx, a.ID, []string{"prod"}, []int64{byID.ID}, limit)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, b := range got {
			names = append(names, b.Name)
		}
		return fmt.Sprint(names)
	}
	flip(t, s, web.ID, t0.Add(time.Minute), beet.StatusNew, beet.StatusDown, beet.FlipSilence)
	if got := byLimit(1); got != "[Web]" {
		t.Fatalf("limit 1 with Web down gave %s; want [Web]: a beet in trouble is never cut first", got)
	}
	flip(t, s, byID.ID, t0.Add(time.Minute), beet.StatusNew, beet.StatusAnomalous, beet.FlipSurge)
	if got := byLimit(2); got != "[Cron Web]" {
		t.Fatalf("limit 2 with Web down and Cron anomalous gave %s; want [Cron Web], by name", got)
	}
	if got := byLimit(0); got != "[Cron db Web]" {
		t.Fatalf("no limit gave %s; want all three by name", got)
	}
	flip(t, s, web.ID, t0.Add(30*time.Minute), beet.StatusDown, beet.StatusNew, beet.FlipRecovery)
	flip(t, s, byID.ID, t0.Add(30*time.Minute), beet.StatusAnomalous, beet.StatusNew, beet.FlipRecovery)

	flip(t, s, web.ID, t0.Add(time.Hour), beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	flip(t, s, web.ID, t0.Add(2*time.Hour), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, web.ID, t0.Add(3*time.Hour), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	flip(t, s, otherProd.ID, t0.Add(2*time.Hour), beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	fs, err := s.FindStatusFlips(ctx, []int64{web.ID, db.ID}, t0.Add(90*time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].To != beet.StatusUp || fs[1].To != beet.StatusDown || fs[0].BeetID != web.ID {
		t.Fatalf("FindStatusFlips = %+v; want web's two flips since, newest first", fs)
	}
	sameTime(t, "flip At", fs[1].At, t0.Add(2*time.Hour))
	if fs, _ := s.FindStatusFlips(ctx, []int64{web.ID}, t0, 1); len(fs) != 1 || fs[0].To != beet.StatusUp || !fs[0].At.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("limit 1 = %+v; want the newest", fs)
	}
}
