package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testbrowser"
)

// TestBrowserRefusedFormsLandOnTheError submits forms far down the beet
// and account pages with a value the service refuses: the page that
// comes back has the field at fault focused and its message on screen,
// not at the top of the page with the message 2,000 px below.
func TestBrowserRefusedFormsLandOnTheError(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	setUpAccount(t, ctx, base)
	b, err := a.Backend().Service.CreateBeet(context.Background(), 1, service.BeetInput{Name: "Nightly backup", Timezone: "Europe/Riga"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // events make the page long: chart, tables, history
		r, err := http.Get(base + "/api/v1/beet/" + b.Token)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	for _, c := range []struct{ name, page, field, value, form, msg, says string }{
		{"a mistyped zone", "/beets/1", "s-tz", "Europe/Rigaa", "settings", "s-tz-err", "not an IANA time zone"},
		{"a bad tag", "/beets/1", "s-tags", "Bad!Tag", "tags", "tags-error", `"bad!tag" may hold only`},
		{"a key name too long", "/account", "key-name", strings.Repeat("k", 101), "keys", "key-name-err", "The key's name is 101 characters long"},
		{"a user already there", "/account", "u-email", "ada@example.com", "users", "u-email-err", "already has a user"},
		{"a wrong current password", "/account", "pw-current", "not my password", "password", "pw-current-err", "is not your current password"},
	} {
		fill := []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + c.page), chromedp.WaitVisible(chromedp.ID(c.field)), setValue(c.field, c.value)}
		if c.form == "users" {
			fill = append(fill, setValue("u-pw", "long enough 1"))
		}
		if c.form == "password" {
			fill = append(fill, setValue("pw-new", "long enough 1"), setValue("pw-new2", "long enough 1"))
		}
		// Chrome applies autofocus (and its scroll) at a rendering update
		// after the load, not by it: on a busy machine the page was read
		// complete before the field had focus. Waited for up to 10 s;
		// the checks below say what is wrong if it never comes.
		fill = append(fill, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+c.field+`").form.requestSubmit()`),
			chromedp.WaitVisible(chromedp.ID(c.msg)), chromedp.Poll[chromedp.Void](`document.readyState === "complete" &&
				(document.activeElement.id === "`+c.field+`" || performance.now() > 10000)`, chromedp.WithPollingTimeout(15*time.Second)))
		testbrowser.Run(t, ctx, c.name, fill...)
		got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
			const m = document.getElementById("`+c.msg+`").getBoundingClientRect();
			return {focus: document.activeElement.id, top: m.top, bottom: m.bottom, vh: window.innerHeight,
				text: document.getElementById("`+c.msg+`").textContent, path: location.pathname, described: document.getElementById("`+c.field+`").getAttribute("aria-describedby")};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		top, _ := got["top"].(float64)
		bottom, _ := got["bottom"].(float64)
		vh, _ := got["vh"].(float64)
		// The address is the page's, not the POST's: a reload or the
		// self-refresh gets the page, not a 404 or a second post.
		if got["path"] != c.page {
			t.Errorf("%s: the address bar says %v, want %s", c.name, got["path"], c.page)
		}
		if got["focus"] != c.field || top < 0 || bottom > vh || got["described"] != c.msg || !strings.Contains(got["text"].(string), c.says) {
			t.Errorf("%s: focus on %q, message %q at %.0f-%.0f px of %.0f, field described by %v; want %s focused, its message %q on screen",
				c.name, got["focus"], got["text"], top, bottom, vh, got["described"], c.field, c.says)
		}
	}
	// Chrome logs each refused form's answer (422, 409) as a failed load.
	for _, e := range consoleErrors() {
		if !strings.Contains(e, "status of 422") && !strings.Contains(e, "status of 409") {
			t.Errorf("console error: %s", e)
		}
	}
}

// recordFetches makes every page keep the addresses it fetches in
// window.fetched.
const recordFetches = `(() => {
  window.fetched = [];
  const f = window.fetch;
  window.fetch = function (u) { window.fetched.push(String(u)); return f.apply(this, arguments); };
})()`

// TestBrowserPreviewIsNotRefreshed: an open Preview alerts result stays
// as it is; the page's self-refresh fetches the beet's page, not the
// preview, which would replay 30 days of events every 10 s.
func TestBrowserPreviewIsNotRefreshed(t *testing.T) {
	ctx, _ := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	onEveryPage(t, ctx, "record fetches", recordFetches)
	setUpAccount(t, ctx, base)
	b, err := a.Backend().Service.CreateBeet(context.Background(), 1, service.BeetInput{Name: "Nightly backup"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.Get(base + "/api/v1/beet/" + b.Token)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	testbrowser.Run(t, ctx, "preview", chromedp.Navigate(base+"/beets/1/backtest?mode=period&period_minutes=60&grace_minutes=5"),
		chromedp.WaitVisible(chromedp.ID("summary")),
		chromedp.Poll[chromedp.Void](`window.fetched.some(u => !u.includes("chart.json"))`, chromedp.WithPollingTimeout(15*time.Second)))
	fetched, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.fetched.filter(u => !u.includes("chart.json")).map(u => new URL(u).pathname + new URL(u).search)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range fetched {
		if u != "/beets/1" {
			t.Errorf("the preview's page refreshed itself from %s; want /beets/1", u)
		}
	}
	if path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search`)); err != nil || !strings.HasPrefix(path, "/beets/1/backtest?") {
		t.Errorf("the preview's address became %q (%v); it is a page of its own", path, err)
	}
}

// TestBrowserLongNameFits: a beet named with one long unbroken word does
// not make its page scroll sideways on a desktop (the breadcrumb, shown
// there and not on a phone, wraps it as the heading does).
func TestBrowserLongNameFits(t *testing.T) {
	ctx, _ := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	setUpAccount(t, ctx, base)
	if _, err := a.Backend().Service.CreateBeet(context.Background(), 1, service.BeetInput{Name: "نسخة " + strings.Repeat("W", 120)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/beets/1", "/"} {
		testbrowser.Run(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main")))
		w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
		if err != nil || w[0] > w[1] {
			t.Errorf("%s with a long name: the page is %v px wide (%v)", p, w, err)
		}
	}
}

// TestBrowserFindBeetsForAStatusPage: typing in the status page form's
// find box hides the beets whose name lacks it (the chosen stay), and
// Enter there asks the server, which keeps the title typed and the beets
// chosen; the page is then created with them.
func TestBrowserFindBeetsForAStatusPage(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	setUpAccount(t, ctx, base)
	for _, name := range []string{"Nightly backup", "Invoice export", "Backup check", "Checkout"} {
		if _, err := a.Backend().Service.CreateBeet(context.Background(), 1, service.BeetInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	shown := `Array.from(document.getElementById("sp-beets").options).filter(o => !o.hidden).map(o => o.textContent).join(", ")`
	testbrowser.Run(t, ctx, "type", chromedp.Navigate(base+"/account/status-pages"), chromedp.WaitVisible(chromedp.ID("sp-find")),
		setValue("sp-title", "Acme"), setValue("sp-slug", "acme"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#sp-beets option[value="2"]').selected = true`),
		chromedp.SendKeys(chromedp.ID("sp-find"), "BACK"))
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](shown)); err != nil || got != "Backup check, Invoice export, Nightly backup" {
		t.Errorf("typing BACK shows %q (%v); want the two backups and the chosen Invoice export", got, err)
	}
	testbrowser.Run(t, ctx, "enter", chromedp.SendKeys(chromedp.ID("sp-find"), "\r"),
		chromedp.WaitVisible(chromedp.ID("sp-beets-found")))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({title: document.getElementById("sp-title").value, path: location.pathname,
		shown: `+shown+`, chosen: Array.from(document.getElementById("sp-beets").selectedOptions).map(o => o.textContent).join(", ")})`))
	if err != nil {
		t.Fatal(err)
	}
	if got["title"] != "Acme" || got["path"] != "/account/status-pages" || got["shown"] != "Invoice export, Backup check, Nightly backup" || got["chosen"] != "Invoice export" {
		t.Errorf("after Enter in the find box: %v; want the title kept, Invoice export chosen first, then the backups", got)
	}
	// Enter in the title creates the page: Find beets is not the form's
	// default button.
	testbrowser.Run(t, ctx, "create", chromedp.SendKeys(chromedp.ID("sp-title"), "\r"), chromedp.WaitVisible(chromedp.ID("notices")))
	pg, err := a.Backend().Service.StatusPage(context.Background(), 1, 1)
	if err != nil || pg.Title != "Acme" || len(pg.BeetIDs) != 1 || pg.BeetIDs[0] != 2 {
		t.Errorf("created page %+v (%v); want Acme showing beet 2", pg, err)
	}
	for _, e := range consoleErrors() {
		t.Errorf("console error: %s", e)
	}
}
