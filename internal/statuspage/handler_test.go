package statuspage_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/statuspage"
	"github.com/beethq/beet/internal/testdb"
)

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestPublicPage: the page shows A's listed beets by section with their
// state, the notices, maintenance of listed beets, and nothing of B, no
// token, no unlisted beet, no description. Both engines.
func TestPublicPage(t *testing.T) { testdb.Each(t, testPublicPage) }

func testPublicPage(t *testing.T, engine string) {
	f := newFixture(t, engine)
	res, body := get(t, f.srv.URL+"/status/acme")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /status/acme: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{"Acme services", "Major outage", "Checkout API", "Invoice run", "Nightly backup",
		"Search index", ">prod<", ">db<", ">Services<", "Invoices are late", "We are restarting it.", "Slow checkout",
		"Past notices", "Database upgrade to PostgreSQL 18.", "Replica lag", `href="/status/acme.rss"`, "Down", "Operational"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range append(f.secret, "<script", "/beets/", "bt_") {
		if strings.Contains(body, bad) {
			t.Errorf("the page shows %q", bad)
		}
	}
	// Sections in the page's tag order, and beets by name within them.
	if i, j, k := strings.Index(body, ">prod<"), strings.Index(body, ">db<"), strings.Index(body, ">Services<"); !(i < j && j < k) {
		t.Errorf("sections at %d, %d, %d; want prod, db, then the beets listed by ID", i, j, k)
	}
	if strings.Index(body, "Checkout API") > strings.Index(body, "Invoice run") {
		t.Error("beets within a section are not by name")
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "style-src 'sha256-") {
		t.Errorf("CSP %q: want none by default and the inline style by hash", csp)
	}

	// B's own page shows B's beet and notice, none of A's.
	_, bBody := get(t, f.srv.URL+"/status/b-page")
	if !strings.Contains(bBody, "B-secret-beet") || !strings.Contains(bBody, "B-secret-notice") {
		t.Errorf("B's page lacks its own beet or notice")
	}
	// B's account-wide window, open now, is on B's page for all its beets.
	if !strings.Contains(bBody, "All services") || !strings.Contains(bBody, ">Now<") || !strings.Contains(bBody, "B-secret-window") {
		t.Errorf("B's page lacks its open account-wide maintenance window")
	}
	for _, a := range []string{"Checkout API", "Invoices are late", "Acme", "Database upgrade"} {
		if strings.Contains(bBody, a) {
			t.Errorf("B's page shows A's %q", a)
		}
	}
}

type reportJSON struct {
	Status   string    `json:"status"`
	Incident *struct{} `json:"incident"`
	Days     []string  `json:"days"`
	Sections []struct {
		Name  string `json:"name"`
		Beets []struct {
			Key    int      `json:"key"`
			Name   string   `json:"name"`
			Status string   `json:"status"`
			Uptime *float64 `json:"uptime_percent"`
			Days   []string `json:"days"`
		} `json:"beets"`
	} `json:"sections"`
	Maintenance []struct {
		Scope  string `json:"scope"`
		Active bool   `json:"active"`
	} `json:"maintenance"`
	Notices []struct {
		Number   int    `json:"number"`
		Title    string `json:"title"`
		Severity string `json:"severity"`
		Resolved bool   `json:"resolved"`
	} `json:"notices"`
}

// TestPublicJSON: the JSON carries the same report, names beets by their
// place on the page (no ID anywhere), and its 90 daily levels follow the
// stored flips.
func TestPublicJSON(t *testing.T) {
	f := newFixture(t, "sqlite")
	res, body := get(t, f.srv.URL+"/status/acme.json")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET .json: %d %v", res.StatusCode, res.Header)
	}
	for _, bad := range append(f.secret, `"id"`, `"beet_id"`, `"account_id"`, `"page_id"`, `"token"`) {
		if strings.Contains(body, bad) {
			t.Errorf("the JSON shows %s", bad)
		}
	}
	var r reportJSON
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "major_outage" || r.Incident != nil || len(r.Days) != 90 || r.Days[89] != "2026-11-20" {
		t.Fatalf("status %q, incident %v, %d days ending %q", r.Status, r.Incident, len(r.Days), r.Days[len(r.Days)-1])
	}
	if len(r.Sections) != 3 || r.Sections[0].Name != "prod" || r.Sections[1].Name != "db" || r.Sections[2].Name != "" {
		t.Fatalf("sections = %+v", r.Sections)
	}
	checkout := r.Sections[0].Beets[0]
	if checkout.Name != "Checkout API" || checkout.Key != 1 || checkout.Status != "up" || len(checkout.Days) != 90 {
		t.Fatalf("checkout = %+v", checkout)
	}
	// Down from 12:30 to 14:30 ten days ago: that day is down, the rest up,
	// and 2 h of 90 days is 99.9% up.
	for i, d := range checkout.Days {
		want := "up"
		if r.Days[i] == "2026-11-10" {
			want = "down"
		}
		if d != want {
			t.Errorf("checkout on %s: %s, want %s", r.Days[i], d, want)
		}
	}
	if checkout.Uptime == nil || *checkout.Uptime != 99.9 {
		t.Errorf("checkout uptime %v, want 99.9", checkout.Uptime)
	}
	backup := r.Sections[1].Beets[0]
	if backup.Name != "Nightly backup" || backup.Days[49] != "degraded" || r.Days[49] != "2026-10-11" || *backup.Uptime != 100 {
		t.Errorf("backup = %+v: degraded on 2026-10-11, never down", backup)
	}
	invoice := r.Sections[0].Beets[1]
	if invoice.Status != "down" || invoice.Days[89] != "down" {
		t.Errorf("invoice run = %+v: down today", invoice)
	}
	if len(r.Maintenance) != 1 || r.Maintenance[0].Scope != "Replica lag" || r.Maintenance[0].Active {
		t.Errorf("maintenance = %+v: the listed beet's upcoming window only", r.Maintenance)
	}
	if len(r.Notices) != 2 || r.Notices[0].Number != 2 || !r.Notices[0].Resolved || r.Notices[1].Severity != "major" {
		t.Errorf("notices = %+v", r.Notices)
	}

	// The banner is the worst of: an open major notice (above), a beet
	// down, an anomalous beet or open minor notice, maintenance now.
	ns, err := f.svc.StatusNotices(context.Background(), f.acctA, f.pageA.ID)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := f.svc.UpdateStatusNotice(context.Background(), f.acctA, f.pageA.ID, ns[1].ID, service.NoticeUpdate{Resolved: &yes}); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, f.srv.URL+"/status/acme.json")
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "partial_outage" {
		t.Errorf("with the major notice resolved and one beet down: %q, %v", r.Status, err)
	}
	// B's page: its beet is up, its window open: under maintenance once its
	// major notice is resolved.
	bPages, err := f.svc.StatusPages(context.Background(), f.acctB)
	if err != nil {
		t.Fatal(err)
	}
	bNotices, err := f.svc.StatusNotices(context.Background(), f.acctB, bPages[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.UpdateStatusNotice(context.Background(), f.acctB, bPages[0].ID, bNotices[0].ID, service.NoticeUpdate{Resolved: &yes}); err != nil {
		t.Fatal(err)
	}
	var rb reportJSON
	_, body = get(t, f.srv.URL+"/status/b-page.json")
	if err := json.Unmarshal([]byte(body), &rb); err != nil || rb.Status != "maintenance" || len(rb.Maintenance) != 1 || !rb.Maintenance[0].Active {
		t.Errorf("B's page with only a window open: %q %+v, %v", rb.Status, rb.Maintenance, err)
	}
}

// A notice's text is HTML-escaped inside the feed's description, which
// readers render as HTML: markup in it is shown, never run.
func TestFeedDescriptionIsEscapedHTML(t *testing.T) {
	f := newFixture(t, "sqlite")
	n := &beet.StatusNotice{Title: "Markup", Body: `<img src=x onerror=alert(1)> & more`, Severity: beet.SeverityInfo}
	if err := f.svc.CreateStatusNotice(context.Background(), f.acctA, f.pageA.ID, n); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, f.srv.URL+"/status/acme.rss")
	var feed struct {
		Items []struct {
			Title       string `xml:"title"`
			Description string `xml:"description"`
		} `xml:"channel>item"`
	}
	if err := xml.Unmarshal([]byte(body), &feed); err != nil {
		t.Fatal(err)
	}
	for _, it := range feed.Items {
		if it.Title == "[INFO] Markup" {
			if it.Description != `&lt;img src=x onerror=alert(1)&gt; &amp; more` {
				t.Errorf("description as a reader gets it: %q, want HTML-escaped text", it.Description)
			}
			return
		}
	}
	t.Fatalf("no item for the notice in %s", body)
}

// TestPublicFeed: the RSS is well-formed and carries the notices.
func TestPublicFeed(t *testing.T) {
	f := newFixture(t, "sqlite")
	res, body := get(t, f.srv.URL+"/status/acme.rss")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/rss+xml") {
		t.Fatalf("GET .rss: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var feed struct {
		Channel struct {
			Title       string `xml:"title"`
			Link        string `xml:"link"`
			Description string `xml:"description"`
			Items       []struct {
				Title string `xml:"title"`
				Link  string `xml:"link"`
				GUID  string `xml:"guid"`
			} `xml:"item"`
		} `xml:"channel"`
	}
	if err := xml.Unmarshal([]byte(body), &feed); err != nil {
		t.Fatalf("the feed is not XML: %v", err)
	}
	ch := feed.Channel
	if ch.Title != "Acme services status" || ch.Link != "https://status.example.test/status/acme" || len(ch.Items) != 2 ||
		ch.Description != "Major outage; down: Invoice run" {
		t.Fatalf("feed = %+v", ch)
	}
	if ch.Items[0].Title != "[RESOLVED] Slow checkout" || ch.Items[1].Title != "[MAJOR] Invoices are late" ||
		ch.Items[1].Link != "https://status.example.test/status/acme#notice-1" {
		t.Errorf("items = %+v", ch.Items)
	}
	for _, bad := range f.secret {
		if strings.Contains(body, bad) {
			t.Errorf("the feed shows %q", bad)
		}
	}
}

// TestPublicIncident: an open global incident shows on every page, as a
// fixed sentence: its reason counts beets of every account and stays out.
func TestPublicIncident(t *testing.T) {
	f := newFixture(t, "sqlite")
	ctx := context.Background()
	inc := &beet.Incident{StartedAt: f.now.Add(-10 * time.Minute), Reason: "37 of 412 watched beets fell silent"}
	if err := f.store.StartIncident(ctx, inc); err != nil {
		t.Fatal(err)
	}
	// The page is cached; a fresh service would see it at once, and this
	// one within the TTL: ask for the B page, never built yet.
	_, body := get(t, f.srv.URL+"/status/b-page")
	if !strings.Contains(body, "has trouble receiving events") || strings.Contains(body, "412") || strings.Contains(body, "37 of") {
		t.Errorf("the incident is missing or shows its reason:\n%s", body)
	}
	_, js := get(t, f.srv.URL+"/status/b-page.json")
	if !strings.Contains(js, `"incident":{"started_at"`) || strings.Contains(js, "412") {
		t.Errorf("JSON incident: %s", js)
	}
	_, feed := get(t, f.srv.URL+"/status/b-page.rss")
	if !strings.Contains(feed, "Monitoring delayed") {
		t.Errorf("the feed lacks the incident")
	}
}

// TestPublicCaching: answers are public for the report's TTL with a weak
// ETag that a revalidation matches (304); an account's change through the
// service shows at once with a new ETag.
func TestPublicCaching(t *testing.T) {
	f := newFixture(t, "sqlite")
	res, _ := get(t, f.srv.URL+"/status/acme")
	etag := res.Header.Get("ETag")
	if res.Header.Get("Cache-Control") != "public, max-age="+strconv.Itoa(int(service.ReportTTL/time.Second)) || !strings.HasPrefix(etag, `W/"`) {
		t.Fatalf("Cache-Control %q, ETag %q", res.Header.Get("Cache-Control"), etag)
	}
	if res, body := get(t, f.srv.URL+"/status/acme", "If-None-Match", etag); res.StatusCode != http.StatusNotModified || body != "" {
		t.Fatalf("revalidation: %d %q, want 304 and no body", res.StatusCode, body)
	}
	jres, _ := get(t, f.srv.URL+"/status/acme.json")
	if jres.Header.Get("ETag") == etag {
		t.Error("the JSON has the HTML's ETag")
	}
	if err := f.svc.CreateStatusNotice(context.Background(), f.acctA, f.pageA.ID, &beet.StatusNotice{Title: "Fresh news", Severity: beet.SeverityInfo}); err != nil {
		t.Fatal(err)
	}
	res, body := get(t, f.srv.URL+"/status/acme", "If-None-Match", etag)
	if res.StatusCode != 200 || !strings.Contains(body, "Fresh news") || res.Header.Get("ETag") == etag {
		t.Fatalf("after a new notice: %d, ETag %q (was %q)", res.StatusCode, res.Header.Get("ETag"), etag)
	}
	if res, _ := http.Head(f.srv.URL + "/status/acme"); res.StatusCode != 200 || res.ContentLength <= 0 {
		t.Errorf("HEAD: %d, length %d", res.StatusCode, res.ContentLength)
	}

	// A client that takes gzip gets the page compressed, the same page.
	plainRes, plain := get(t, f.srv.URL+"/status/acme", "Accept-Encoding", "identity")
	zres, zbody := get(t, f.srv.URL+"/status/acme", "Accept-Encoding", "br, gzip")
	if plainRes.Header.Get("Content-Encoding") != "" || zres.Header.Get("Content-Encoding") != "gzip" || zres.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("encodings: %q and %q", plainRes.Header.Get("Content-Encoding"), zres.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(strings.NewReader(zbody))
	if err != nil {
		t.Fatal(err)
	}
	unz, _ := io.ReadAll(zr)
	if string(unz) != plain || len(zbody) > len(plain)/2 {
		t.Errorf("gzip: %d bytes for %d, same page %v", len(zbody), len(plain), string(unz) == plain)
	}
}

// TestPublicNotFound: an unknown or malformed slug is a plain 404 (a JSON
// one for .json) that is not cached; a deleted page is gone at once.
func TestPublicNotFound(t *testing.T) {
	f := newFixture(t, "sqlite")
	for _, p := range []string{"/status/nope", "/status/ACME", "/status/acme.xml", "/status/a", "/status/acme..json", "/status/%2e%2e"} {
		res, body := get(t, f.srv.URL+p)
		if res.StatusCode != 404 || res.Header.Get("Cache-Control") != "no-store" || strings.Contains(body, "Acme") {
			t.Errorf("%s: %d %q", p, res.StatusCode, body)
		}
	}
	res, body := get(t, f.srv.URL+"/status/nope.json")
	if res.StatusCode != 404 || !strings.Contains(body, `"code":"not_found"`) {
		t.Errorf(".json 404: %d %s", res.StatusCode, body)
	}
	get(t, f.srv.URL+"/status/acme") // cached
	if err := f.svc.DeleteStatusPage(context.Background(), f.acctA, f.pageA.ID); err != nil {
		t.Fatal(err)
	}
	if res, _ := get(t, f.srv.URL+"/status/acme"); res.StatusCode != 404 {
		t.Errorf("a deleted page: %d", res.StatusCode)
	}
}

// TestPublicConcurrent: many readers of a page that is not built yet all
// get it, the same (one shared build, checked for races under -race).
func TestPublicConcurrent(t *testing.T) {
	f := newFixture(t, "sqlite")
	const readers = 16
	etags := make(chan string, readers)
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			res, err := http.Get(f.srv.URL + "/status/acme")
			if err != nil {
				etags <- err.Error()
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			etags <- strconv.Itoa(res.StatusCode) + " " + res.Header.Get("ETag")
		})
	}
	wg.Wait()
	close(etags)
	first := ""
	for e := range etags {
		if first == "" {
			first = e
		}
		if !strings.HasPrefix(e, "200 W/") || e != first {
			t.Errorf("reader got %q, first %q", e, first)
		}
	}
}

// TestPublicUnderBasePath: behind a proxy that serves Beet under a path,
// the page's links and the feed's carry it.
func TestPublicUnderBasePath(t *testing.T) {
	f := newFixture(t, "sqlite")
	h, err := statuspage.New(f.svc, nil, "https://example.test/beet/")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if _, body := get(t, srv.URL+"/status/acme"); !strings.Contains(body, `href="/beet/status/acme.rss"`) || !strings.Contains(body, `href="/beet/status/acme.json"`) {
		t.Error("the page's links lack the base path")
	}
	if _, feed := get(t, srv.URL+"/status/acme.rss"); !strings.Contains(feed, "<link>https://example.test/beet/status/acme</link>") {
		t.Errorf("the feed's link lacks the base path:\n%s", feed)
	}
}

// TestPublicPageCutAtLimit: a page whose tags match more beets than it
// shows says it was cut, and a beet in trouble past the cut by name is
// shown all the same, and sets the banner: a down beet is never hidden
// under "All systems operational".
func TestPublicPageCutAtLimit(t *testing.T) {
	ctx := t.Context()
	db := testdb.New(t, "sqlite")
	now := time.Date(2026, 11, 20, 14, 30, 0, 0, time.UTC)
	c := &clock{t: now.AddDate(0, 0, -2)}
	svc := service.New(db, service.Options{Now: c.now, PasswordParams: cheapHash})
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanPro)
	if err != nil {
		t.Fatal(err)
	}
	var last *beet.Beet
	for i := range beet.MaxStatusPageBeets + 1 {
		if last, err = svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: fmt.Sprintf("job %04d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SetBeetTags(ctx, a.ID, last.ID, "prod"); err != nil {
			t.Fatal(err)
		}
		if err := db.SetBeetStatus(ctx, &beet.Flip{BeetID: last.ID, At: c.now(), From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetBeetStatus(ctx, &beet.Flip{BeetID: last.ID, At: now.Add(-time.Hour), From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	c.set(now)
	if err := svc.CreateStatusPage(ctx, a.ID, &beet.StatusPage{Slug: "big", Title: "Big", Tags: []string{"prod"}}); err != nil {
		t.Fatal(err)
	}
	h, err := statuspage.New(svc, nil, "https://status.example.test")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	_, body := get(t, srv.URL+"/status/big.json")
	var r struct {
		reportJSON
		Truncated bool `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	shown := r.Sections[0].Beets
	if !r.Truncated || len(shown) != beet.MaxStatusPageBeets {
		t.Fatalf("truncated %v with %d beets shown; want true with %d", r.Truncated, len(shown), beet.MaxStatusPageBeets)
	}
	if r.Status != "partial_outage" || shown[len(shown)-1].Name != last.Name || shown[len(shown)-1].Status != "down" {
		t.Fatalf("status %q, last shown %q %s; want partial_outage and %q down", r.Status, shown[len(shown)-1].Name, shown[len(shown)-1].Status, last.Name)
	}
	if shown[0].Name != "job 0000" || shown[len(shown)-2].Name != "job 0998" {
		t.Errorf("shown from %q to %q before the down beet; want job 0000 to job 0998: by name, the down one kept", shown[0].Name, shown[len(shown)-2].Name)
	}
	if _, page := get(t, srv.URL+"/status/big"); !strings.Contains(page, "More beets match than this page shows: it shows 1000") {
		t.Errorf("the HTML page does not say it was cut")
	}
}

// TestPublicKeysInShownOrder: a beet's key is its place as the page shows
// it, section by section, not its place by name across the page.
func TestPublicKeysInShownOrder(t *testing.T) {
	f := newFixture(t, "sqlite")
	p := &beet.StatusPage{Slug: "db-first", Title: "DB first", Tags: []string{"db", "prod"}}
	if err := f.svc.CreateStatusPage(t.Context(), f.acctA, p); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, f.srv.URL+"/status/db-first.json")
	var r reportJSON
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sec := range r.Sections {
		for _, b := range sec.Beets {
			got = append(got, fmt.Sprintf("%d %s", b.Key, b.Name))
		}
	}
	if want := "[1 Nightly backup 2 Replica lag 3 Checkout API 4 Invoice run]"; fmt.Sprint(got) != want {
		t.Errorf("keys %v; want %s", got, want)
	}
}
