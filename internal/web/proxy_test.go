package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testbrowser"
	"github.com/beethq/beet/internal/testlog"
)

// With BEET_LISTEN on port 0 and no base URL, the base URL in the logs and
// in the links Beet hands out names the port it got, not 0.
func TestListenPortZeroBaseURL(t *testing.T) {
	env := map[string]string{
		"BEET_LISTEN":           "127.0.0.1:0",
		"BEET_DATABASE_URL":     "sqlite://" + filepath.Join(t.TempDir(), "beet.db"),
		"BEET_SPOOL_PATH":       filepath.Join(t.TempDir(), "beet.spool"),
		"BEET_CLEANUP_INTERVAL": "0",
	}
	cfg, err := config.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	a, err := app.New(context.Background(), cfg, app.Options{Log: slog.New(slog.NewTextHandler(logs, nil)), PasswordParams: &cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	port := a.URL()[strings.LastIndex(a.URL(), ":")+1:]
	want := "http://localhost:" + port
	if !strings.Contains(logs.String(), "base_url="+want) || !strings.Contains(logs.String(), "url="+want+"/setup") || strings.Contains(logs.String(), "localhost:0") {
		t.Fatalf("logs do not name port %s:\n%s", port, logs.String())
	}
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/beets", url.Values{"name": {"Port"}})
	if page := b.get("/beets/1").body; !strings.Contains(page, `data-copy="`+want+`/api/v1/beet/bt_`) {
		t.Fatalf("the ingestion URL does not name port %s", port)
	}
}

// prefixProxy serves Beet under /beet on another port, as a reverse proxy
// that strips the prefix does (nginx `location /beet/ { proxy_pass http://beet/; }`).
func prefixProxy(t *testing.T, mod func(*config.Config)) (*app.App, string) {
	t.Helper()
	var target atomic.Pointer[url.URL]
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target.Load())
		pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, "/beet")
		pr.Out.URL.RawPath = ""
		pr.Out.Host = pr.In.Host
		pr.SetXForwarded()
	}})
	t.Cleanup(proxy.Close)
	a := startApp(t, func(c *config.Config) {
		c.BaseURL = proxy.URL + "/beet"
		if mod != nil {
			mod(c)
		}
	})
	u, _ := url.Parse(a.URL())
	target.Store(u)
	return a, proxy.URL
}

var localRef = regexp.MustCompile(`(?:href|src|action|formaction|data-src)="(/[^"]*)"`)

// Behind a proxy that serves it under a path, every link, asset, form,
// redirect and cookie of the dashboard carries the path.
func TestBasePathBehindProxy(t *testing.T) {
	_, proxy := prefixProxy(t, nil)
	b := newBrowser(t, proxy)
	r := b.get("/beet/")
	want(t, "the list sends to setup", r, http.StatusSeeOther, "/beet/setup")
	r = b.post("/beet/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}})
	want(t, "setup", r, http.StatusSeeOther, "/beet/beets/new?welcome=1")
	if c := r.header.Get("Set-Cookie"); !strings.Contains(c, "Path=/beet/") {
		t.Fatalf("session cookie %q is not for /beet/", c)
	}
	want(t, "create", b.post("/beet/beets", url.Values{"name": {"Prefixed"}}), http.StatusSeeOther, "/beet/beets/1?created=1")
	b.post("/beet/beets/1/tags", url.Values{"tags": {"prod"}})
	for _, page := range []string{"/beet/", "/beet/beets/1", "/beet/account", "/beet/beets/new", "/beet/account/channels/new"} {
		r := b.get(page)
		if r.status != 200 {
			t.Fatalf("%s: %d", page, r.status)
		}
		refs := localRef.FindAllStringSubmatch(r.body, -1)
		if len(refs) < 5 {
			t.Fatalf("%s: only %d local references", page, len(refs))
		}
		for _, m := range refs {
			if !strings.HasPrefix(m[1], "/beet/") {
				t.Errorf("%s links to %s, outside /beet/", page, m[1])
				continue
			}
			if strings.Contains(m[1], "/static/") {
				if a := b.get(m[1]); a.status != 200 {
					t.Errorf("%s: asset %s answers %d through the proxy", page, m[1], a.status)
				}
			}
		}
	}
	if page := b.get("/beet/beets/1").body; !strings.Contains(page, `data-copy="`+proxy+`/beet/api/v1/beet/bt_`) {
		t.Error("the ingestion URL lacks the path")
	}
	if r := b.get("/beet/beets/1/chart.json"); r.status != 200 || !strings.Contains(r.body, `"counts"`) {
		t.Errorf("chart data through the proxy: %d", r.status)
	}
	want(t, "sign out", b.post("/beet/logout", url.Values{}), http.StatusSeeOther, "/beet/login?out=1")
	want(t, "a page after sign-out", b.get("/beet/beets/1"), http.StatusSeeOther, "/beet/login?next=%2Fbeets%2F1")
}

// The same in chromium: setup, a beet, its chart, all through the proxy,
// without a console error (a wrong asset path would be one).
func TestBrowserBasePath(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	_, proxy := prefixProxy(t, nil)
	testbrowser.Run(t, ctx, "open Beet under /beet", chromedp.Navigate(proxy+"/beet/"), chromedp.WaitVisible(chromedp.ID("password2")))
	testbrowser.Run(t, ctx, "set up",
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		chromedp.SendKeys(chromedp.ID("password2"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("name")))
	testbrowser.Run(t, ctx, "create a beet", chromedp.SendKeys(chromedp.ID("name"), "Under a path"),
		chromedp.Click(chromedp.CSS(`form[action="/beet/beets"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("start-lines")))
	// Its first event, through the proxy: the page turns into the chart
	// by itself (self-refresh reloads a new beet's page at its first event).
	hit(t, "GET", attr(t, ctx, `#send button[data-copy^="http"]`, "data-copy"), "")
	testbrowser.Run(t, ctx, "the chart", chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasPrefix(loc, proxy+"/beet/beets/1") {
		t.Fatalf("after creating: %q %v", loc, err)
	}
	testbrowser.Run(t, ctx, "the list", chromedp.Click(chromedp.CSS(`.crumbs a`)), chromedp.WaitVisible(chromedp.CSS(".beets")))
	time.Sleep(200 * time.Millisecond)
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// Every absolute link, form action and asset in every template goes
// through {{root}}, so a base path prefix reaches all of them (pages that
// the proxy test does not reach, such as the "make it a cron beet" form,
// included).
func TestTemplatesPrefixEveryPath(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("templates", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	attr := regexp.MustCompile(`(?i)\b(href|src|action|formaction|data-src|srcset)="(/[^"]*)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range attr.FindAllStringSubmatch(string(b), -1) {
			t.Errorf("%s: %s=%q is not prefixed with {{root}}", f, m[1], m[2])
		}
	}
}
