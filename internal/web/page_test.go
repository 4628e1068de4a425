package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/detect"
)

// TestBeetPageOrderAndFirstDay: the beet page puts what a person opens it
// for first (state, reason, chart, recent events), then how to send events
// (the URL with one copy button, the snippets in one tabbed block), then
// history and settings. On day one it says what it has seen, what auto
// mode is learning and when full alerts start. Values sent in bodies reach
// the chart as their average per bucket.
func TestBeetPageOrderAndFirstDay(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")

	page := b.get("/beets/1").body
	if !strings.Contains(page, `id="start-lines"`) || strings.Contains(page, `id="chart"`) {
		t.Errorf("a new beet's page does not lead with where to send its first event")
	}
	ingest := a.URL() + "/api/v1/beet/" + tokenOf(t, b, 1)
	hit(t, "POST", ingest, `{"value": 5}`)
	hit(t, "POST", ingest, `{"value": 7}`)
	hit(t, "GET", ingest, "")
	waitFor(t, "learning", func() bool {
		return strings.Contains(b.get("/beets/1").body, `id="dayone">3 events in the last 24 hours.`)
	})
	page = b.get("/beets/1").body
	arm := a.Backend().Service.Now().Add(detect.ArmingRule.After).UTC().Format("Jan 2 ")
	for _, s := range []string{"Auto mode is learning when events come and how many", "; full alerts from " + arm,
		"To alert at once, set a period or a schedule under Detection."} {
		if !strings.Contains(page, s) {
			t.Errorf("day one does not say %q:\n%s", s, between(page, `id="dayone"`, "</p>"))
		}
	}

	// The order, top to bottom.
	marks := []string{`id="status"`, `id="reason"`, `id="dayone"`, `id="chart"`, `id="runs"`, `id="events"`, `id="ingest-url"`, `data-tabs`,
		`id="history"`, `id="detection"`, `id="alerts"`, `id="settings"`}
	last, lastMark := -1, ""
	for _, m := range marks {
		i := strings.Index(page, m)
		if i < 0 {
			t.Errorf("the page has no %s", m)
			continue
		}
		if i < last {
			t.Errorf("%s comes before %s; want it after", m, lastMark)
		}
		last, lastMark = i, m
	}
	send := between(page, `<section id="send"`, "</section>")
	if n := strings.Count(send, ">Copy URL</button>"); n != 1 {
		t.Errorf("%d Copy URL buttons, want one", n)
	}
	if strings.Count(send, `data-tabs`) != 1 || strings.Count(send, `role="tab"`) < 4 || strings.Count(send, `role="tab"`) != strings.Count(send, `role="tabpanel"`) {
		t.Errorf("the snippets are not one tabbed block (a tab per panel)")
	}

	var chart struct {
		Counts []int64    `json:"counts"`
		Values []*float64 `json:"values"`
	}
	r := b.get("/beets/1/chart.json")
	if err := json.Unmarshal([]byte(r.body), &chart); err != nil {
		t.Fatal(err)
	}
	last = len(chart.Counts) - 1
	if len(chart.Values) != len(chart.Counts) || chart.Counts[last] != 3 || chart.Values[last] == nil || *chart.Values[last] != 6 || chart.Values[0] != nil {
		t.Errorf("chart: counts %v values %v; want 3 events and their average value 6 in the last bucket, null elsewhere", chart.Counts[last], chart.Values)
	}
}

// between returns s from the first from up to the next to after it.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}

// The first-run setup asks a self-hoster for no plan (the account keeps
// events for 3 years), and the account page links the API reference and
// the OpenAPI document, which answer.
func TestSetupAsksNoPlanAndAccountLinksDocs(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	page := b.get("/setup").body
	if strings.Contains(strings.ToLower(page), "plan") {
		t.Errorf("the setup page mentions a plan:\n%s", between(page, "<form", "</form>"))
	}
	want(t, "setup", b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}),
		http.StatusSeeOther, "/beets/new?welcome=1")
	acc := b.get("/account").body
	if !strings.Contains(acc, "3 years") {
		t.Error("the first account does not keep events for 3 years")
	}
	for _, link := range []string{`href="/api/v1/docs" id="api-docs">API reference</a>`, `href="/api/v1/openapi.json">OpenAPI document</a>`} {
		if !strings.Contains(acc, link) {
			t.Errorf("the account page lacks %s", link)
		}
	}
	for _, p := range []string{"/api/v1/docs", "/api/v1/openapi.json"} {
		res, err := http.Get(a.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", p, res.StatusCode)
		}
	}
}

// Removing a user asks first: the account page's Remove… opens a dialog,
// or without JavaScript a confirmation page naming the user; nobody is
// offered to remove themselves, and another account's user is not found.
func TestRemoveUserAsksFirst(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "add bob", b.post("/account/users", url.Values{"email": {"bob@example.com"}, "password": {"bobs password"}}), http.StatusSeeOther, "/account?done=user#users")
	acc := b.get("/account").body
	if !strings.Contains(acc, `href="/account/users/2/confirm/remove" data-dialog="dlg-user-2"`) ||
		!strings.Contains(between(acc, `<dialog id="dlg-user-2"`, "</dialog>"), `action="/account/users/2/remove"`) {
		t.Errorf("no asking Remove… for bob:\n%s", between(acc, `id="users"`, "</section>"))
	}
	if strings.Contains(acc, "/account/users/1/confirm/remove") {
		t.Error("ada is offered to remove herself")
	}
	r := b.get("/account/users/2/confirm/remove")
	if r.status != 200 || !strings.Contains(r.body, "bob@example.com") || !strings.Contains(r.body, `action="/account/users/2/remove"`) || !strings.Contains(r.body, "signed out at once") {
		t.Errorf("confirmation page: %d", r.status)
	}
	if r := b.get("/account/users/1/confirm/remove"); r.status != http.StatusConflict || !strings.Contains(r.body, "cannot remove yourself") {
		t.Errorf("confirming her own removal: %d", r.status)
	}
	if r := b.get("/account/users/9/confirm/remove"); r.status != http.StatusNotFound {
		t.Errorf("confirming an unknown user's removal: %d", r.status)
	}
	want(t, "remove bob", b.post("/account/users/2/remove", url.Values{}), http.StatusSeeOther, "/account?done=user-removed#users")
	if r := b.get("/account/users/2/confirm/remove"); r.status != http.StatusNotFound {
		t.Errorf("confirming a removed user's removal: %d", r.status)
	}
}
