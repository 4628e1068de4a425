package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/web"
)

// webIsolation says how each dashboard route is checked with Eve's
// session against Ada's objects: byID routes name one of Ada's objects and
// must answer 404 without her data; own routes act on Eve's own account
// and must show none of Ada's data; public routes need no session. A route
// without an entry fails TestDashboardIsolationEveryRoute.
var webIsolation = map[string]string{
	"GET /{$}":                                     "own",
	"GET /setup":                                   "public",
	"POST /setup":                                  "public",
	"GET /login":                                   "public",
	"POST /login":                                  "public",
	"POST /logout":                                 "public",
	"GET /signup":                                  "public",
	"POST /signup":                                 "public",
	"GET /beets/new":                               "own",
	"GET /beets/schedule-preview":                  "own",
	"POST /beets":                                  "own",
	"GET /beets/{id}":                              "byID",
	"GET /beets/{id}/chart.json":                   "byID",
	"GET /beets/{id}/confirm/{action}":             "byID",
	"POST /beets/{id}/rotate":                      "byID",
	"POST /beets/{id}/pause":                       "byID",
	"POST /beets/{id}/resume":                      "byID",
	"POST /beets/{id}/delete":                      "byID",
	"POST /beets/{id}/settings":                    "byID",
	"POST /beets/{id}/detection":                   "byID",
	"POST /beets/{id}/channels":                    "byID",
	"GET /beets/{id}/backtest":                     "byID",
	"GET /account":                                 "own",
	"POST /account/keys":                           "own",
	"GET /account/keys/{key}/confirm/revoke":       "byID",
	"POST /account/keys/{key}/revoke":              "byID",
	"POST /account/users":                          "own",
	"GET /account/channels":                        "own",
	"GET /account/channels/new":                    "own",
	"POST /account/channels":                       "own",
	"GET /account/channels/{id}":                   "byID",
	"GET /account/channels/{id}/confirm/delete":    "byID",
	"POST /account/channels/{id}/test":             "byID",
	"POST /account/channels/{id}/settings":         "byID",
	"POST /account/channels/{id}/delete":           "byID",
	"GET /account/maintenance/new":                 "own",
	"POST /account/maintenance":                    "own",
	"GET /account/maintenance/{id}/confirm/delete": "byID",
	"POST /account/maintenance/{id}/delete":        "byID",
	"GET /unknown-tokens":                          "own",
	"GET /account/users/{id}/confirm/remove":       "byID",
	"POST /account/users/{id}/remove":              "byID",
	"POST /account/timezone":                       "own",
	"POST /account/password":                       "own",
	"POST /account/badges/reset":                   "own",
	"POST /beets/bulk":                             "own", // ids of another account's beets: TestListTagsSortBulk
	"POST /beets/{id}/tags":                        "byID",

	// Status pages.
	"GET /account/status-pages":                                      "own",
	"POST /account/status-pages":                                     "own",
	"GET /account/status-pages/{id}":                                 "byID",
	"POST /account/status-pages/{id}":                                "byID",
	"POST /account/status-pages/{id}/notices":                        "byID",
	"POST /account/status-pages/{id}/notices/{notice}/{action}":      "byID",
	"GET /account/status-pages/{id}/confirm/delete":                  "byID",
	"GET /account/status-pages/{id}/notices/{notice}/confirm/delete": "byID",
	"POST /account/status-pages/{id}/delete":                         "byID",
}

// TestDashboardIsolationEveryRoute walks the dashboard's own route table
// (web.Handler.Routes) with two signed-in people. On every route: Eve's
// session against Ada's objects gets 404 and none of Ada's data; every
// page carries the security headers; every form refuses a cross-site post
// with 403 (CSRF). Ada's objects are unchanged at the end. Both engines.
func TestDashboardIsolationEveryRoute(t *testing.T) {
	testdb.Each(t, testDashboardIsolationEveryRoute)
}

func testDashboardIsolationEveryRoute(t *testing.T, engine string) {
	a := startApp(t, func(c *config.Config) {
		c.SignupOpen, c.AllowPrivateTargets, c.DatabaseURL = true, true, testdb.URL(t, engine)
	})
	ada := newBrowser(t, a.URL())
	setup(t, ada, "ada@example.com")
	const secret = "Ada-secret-name"
	want(t, "ada's beet", ada.post("/beets", url.Values{"name": {secret}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	token := tokenOf(t, ada, 1)
	want(t, "ada's channel", ada.post("/account/channels", url.Values{"kind": {"webhook"}, "name": {secret},
		"url": {"http://127.0.0.1:9/ada-secret-path"}}), http.StatusSeeOther, "/account/channels/1?created=1")
	want(t, "ada's window", ada.post("/account/maintenance", url.Values{"mode": {"once"}, "beet_id": {"1"}, "starts_at": {"2030-06-01T22:00"},
		"ends_at": {"2030-06-02T01:30"}, "timezone": {"UTC"}, "note": {secret}}), http.StatusSeeOther, "/account?done=window#maintenance")
	want(t, "ada's status page", ada.post("/account/status-pages", url.Values{"title": {secret}, "slug": {"ada-status"}, "tags": {"prod"}}),
		http.StatusSeeOther, "/account/status-pages/1?done=created")
	want(t, "ada's notice", ada.post("/account/status-pages/1/notices", url.Values{"title": {secret}, "severity": {"major"}}),
		http.StatusSeeOther, "/account/status-pages/1?done=notice#notices")
	// Creating a key redirects to the page that shows it once.
	if r := ada.post("/account/keys", url.Values{"name": {secret}}); r.status != http.StatusSeeOther {
		t.Fatalf("ada's key: %d", r.status)
	}
	keyID := regexp.MustCompile(`/account/keys/(\d+)/revoke`).FindStringSubmatch(ada.get("/account").body)[1]

	eve := newBrowser(t, a.URL())
	want(t, "eve signs up", eve.post("/signup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}),
		http.StatusSeeOther, "/beets/new?welcome=1")

	fill := strings.NewReplacer("{id}", "1", "{key}", keyID, "{action}", "rotate", "{notice}", "1", "{$}", "")
	// A form with every field any route reads, so a 404 is about the object
	// and not a missing field.
	form := url.Values{"name": {"eve's"}, "timezone": {"UTC"}, "mode": {"auto"}, "kind": {"webhook"},
		"url": {"http://127.0.0.1:9/eve"}, "email": {"x@example.com"}, "password": {"correct horse"}}
	hasData := func(body string) bool {
		return strings.Contains(body, secret) || strings.Contains(body, token) || strings.Contains(body, "ada-secret-path")
	}
	h, err := web.New(web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := h.Routes()
	seen := map[string]bool{}
	for _, rt := range list {
		seen[rt.Pattern] = true
		kind, ok := webIsolation[rt.Pattern]
		if !ok {
			t.Errorf("dashboard route %s has no isolation case: add it to webIsolation", rt.Pattern)
			continue
		}
		method, pattern, _ := strings.Cut(rt.Pattern, " ")
		path := fill.Replace(pattern)
		if method == "POST" {
			// CSRF: Ada's own session, posted from another site.
			r := ada.do("POST", path, form, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
			if r.status != http.StatusForbidden {
				t.Errorf("cross-site POST %s with Ada's session: %d, want 403", path, r.status)
			}
		}
		if kind == "public" {
			continue
		}
		var res answer
		if method == "GET" {
			res = eve.get(path)
			if h := res.header; !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") == "" {
				t.Errorf("GET %s: security headers missing: %v", path, h)
			}
		} else if kind == "byID" {
			res = eve.post(path, form)
		} else {
			continue // Eve creating things in her own account is checked below
		}
		if kind == "byID" && res.status != http.StatusNotFound {
			t.Errorf("eve %s %s: %d, want 404", method, path, res.status)
		}
		if res.status == http.StatusForbidden {
			t.Errorf("eve %s %s: 403 tells her the object exists", method, path)
		}
		if hasData(res.body) {
			t.Errorf("eve %s %s shows Ada's data", method, path)
		}
	}
	for p := range webIsolation {
		if !seen[p] {
			t.Errorf("webIsolation has %s, which is no route (renamed?)", p)
		}
	}
	// Eve's own pages after her attempts still show nothing of Ada's.
	for _, p := range []string{"/", "/account"} {
		if hasData(eve.get(p).body) {
			t.Errorf("eve's %s shows Ada's data", p)
		}
	}
	// Ada's things are as they were.
	page := ada.get("/beets/1").body
	if tokenOf(t, ada, 1) != token || !strings.Contains(page, secret) || strings.Contains(page, "st-paused") {
		t.Error("Ada's beet changed")
	}
	if acct := ada.get("/account").body; !strings.Contains(acct, "/account/keys/"+keyID+"/revoke") || !strings.Contains(acct, secret) {
		t.Error("Ada's key or window is gone")
	}
	if r := ada.get("/account/channels/1"); r.status != 200 || !strings.Contains(r.body, secret) {
		t.Errorf("Ada's channel: %d", r.status)
	}
	if r := ada.get("/account/status-pages/1"); r.status != 200 || !strings.Contains(r.body, secret) || !strings.Contains(r.body, "st-anomalous\">Open") {
		t.Errorf("Ada's status page or its open notice changed: %d", r.status)
	}
	// Eve's list of status pages shows none of Ada's.
	if hasData(eve.get("/account/status-pages").body) {
		t.Error("eve's status pages show Ada's")
	}
}

// TestSessionFixation: a session id planted before sign-in is never the
// one signed in (a new id is issued at sign-in), and a signed-out session
// cannot be replayed.
func TestSessionFixation(t *testing.T) {
	a := startApp(t, nil)
	ada := newBrowser(t, a.URL())
	setup(t, ada, "ada@example.com")
	want(t, "sign out", ada.post("/logout", url.Values{}), http.StatusSeeOther, "/login?out=1")

	victim := newBrowser(t, a.URL())
	u, _ := url.Parse(a.URL())
	planted := &http.Cookie{Name: "beet_session", Value: "attacker-chosen-session-id-0123456789", Path: "/"}
	victim.c.Jar.SetCookies(u, []*http.Cookie{planted})
	r := victim.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}})
	want(t, "sign in", r, http.StatusSeeOther, "/")
	var issued string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "beet_session" {
			issued = c.Value
		}
	}
	if issued == "" || issued == planted.Value {
		t.Fatalf("sign-in kept the planted session id (issued %q)", issued)
	}
	attacker := newBrowser(t, a.URL())
	attacker.c.Jar.SetCookies(u, []*http.Cookie{planted})
	want(t, "the planted id after the victim signed in", attacker.get("/"), http.StatusSeeOther, "/login")

	// Replaying the signed-in id after sign-out.
	want(t, "victim signs out", victim.post("/logout", url.Values{}), http.StatusSeeOther, "/login?out=1")
	replay := newBrowser(t, a.URL())
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: "beet_session", Value: issued, Path: "/"}})
	want(t, "a signed-out session replayed", replay.get("/"), http.StatusSeeOther, "/login")
}

// TestHostileTextIsEscaped: a beet name, description and an event's user
// agent full of markup come back as text on every page that shows them,
// never as markup (XSS).
func TestHostileTextIsEscaped(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'`
	want(t, "hostile beet", b.post("/beets", url.Values{"name": {evil}, "description": {evil}, "timezone": {"UTC"}}),
		http.StatusSeeOther, "/beets/1?created=1")
	token := tokenOf(t, b, 1)
	r := b.do("GET", "/api/v1/beet/"+token, nil, map[string]string{"User-Agent": evil})
	if r.status != 200 {
		t.Fatalf("ingestion: %d", r.status)
	}
	waitFor(t, "the event on the beet page", func() bool { return strings.Contains(b.get("/beets/1").body, "&lt;img src=x") })
	for _, p := range []string{"/", "/beets/1", "/beets/1/confirm/delete", "/account/maintenance/new"} {
		page := b.get(p).body
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") || strings.Contains(page, "onerror=alert(2)>") {
			t.Errorf("%s renders the hostile text as markup", p)
		}
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the name as text", p)
		}
	}
}
