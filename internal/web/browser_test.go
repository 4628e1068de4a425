package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testbrowser"
)

// artefactDir is where the browser test saves its screenshots; CI keeps
// them, and the README shows copies from docs/img.
// setUpAccount creates the first user through /setup at base, signed in
// on the beet list.
func setUpAccount(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	testbrowser.Run(t, ctx, "set up", chromedp.Navigate(base+"/setup"),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		chromedp.SendKeys(chromedp.ID("password2"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("name")))
}

// onEveryPage runs script in every document the browser opens from now
// on, before the page's own scripts.
func onEveryPage(t *testing.T, ctx context.Context, what, script string) {
	t.Helper()
	testbrowser.Run(t, ctx, what, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	}))
}

func artefactDir(t *testing.T) string {
	dir := os.Getenv("BEET_TEST_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artefacts", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newChrome starts headless chromium at 1280x900 (testbrowser.New).
func newChrome(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	return testbrowser.New(t, chromedp.WindowSize(1280, 900))
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	r, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil || !r.Exists {
		t.Fatalf("attribute %s of %s: %v", name, sel, err)
	}
	return r.Value
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	writeArtefact(t, name, png)
}

func writeArtefact(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join(artefactDir(t), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s (%d bytes)", path, len(b))
}

// pressKey presses and releases one key as a keyboard does: one keyDown
// carrying the key's text, then a keyUp. (chromedp.KeyEvent also sends a
// separate char event, which Chrome takes as a second press of Enter.)
func pressKey(key, text string, code int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Code: key, Text: text,
			WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := down
		up.Type, up.Text = input.DispatchKeyEventTypeKeyUp, ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up)
		return err
	})
}

// foreignSite serves a page from another origin (localhost instead of
// 127.0.0.1, another port) holding the snippets as a user pastes them: the
// <img> beacon, and a script with the fetch POST and the sendBeacon. The
// page's title becomes "sent" once the image and the fetch are done.
type foreignSite struct {
	mu                 sync.Mutex
	img, fetch, beacon string
	url                string
}

func newForeignSite(t *testing.T) *foreignSite {
	f := &foreignSite{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>shop</title><link rel="icon" href="data:,"></head><body>
<h1>Thank you for your order</h1>
%s
<script>
var img = document.querySelector("img");
var imgDone = new Promise(function (ok) { if (img.complete) ok(); else { img.onload = ok; img.onerror = ok; } });
var sent = Promise.resolve(%s);
%s
Promise.all([imgDone, sent]).then(function () { document.title = "sent"; });
</script></body></html>`, f.img, strings.TrimSuffix(f.fetch, ";"), f.beacon)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	f.url = fmt.Sprintf("http://localhost:%d/order/done", ln.Addr().(*net.TCPAddr).Port)
	return f
}

// set puts a beet page's snippets on the foreign page.
func (f *foreignSite) set(img, fetch, beacon string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.img, f.fetch, f.beacon = img, fetch, beacon
}

func eventsOf(t *testing.T, a *app.App, beetID int64) []*beet.Event {
	t.Helper()
	ev, err := a.Backend().Store.FindEvents(context.Background(), beet.EventFilter{BeetID: beetID})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestBrowser walks the README's promise in a real browser: set up the
// first account, create a beet, copy its URL, paste the snippets into a
// page of another site, see the events arrive on the beet's page, rotate
// the token and see the old URL stop recording, with no console error on
// the way.
func TestBrowser(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()

	// First run: the dashboard sends a new user to the setup page, which
	// sends the browser's time zone along.
	testbrowser.Run(t, ctx, "a browser in Riga", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Riga"})
		return err
	}))
	testbrowser.Run(t, ctx, "open Beet", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("password2")))
	testbrowser.Run(t, ctx, "set up the first account",
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse battery"),
		chromedp.SendKeys(chromedp.ID("password2"), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("name")))
	if s := text(t, ctx, ".notice"); !strings.Contains(s, "Your account is ready") {
		t.Errorf("after setup: %q", s)
	}
	if acc, err := a.Backend().Service.Account(context.Background(), 1); err != nil || acc.Timezone != "Europe/Riga" {
		t.Errorf("the account's zone after setup in a Riga browser: %+v %v", acc, err)
	}
	testbrowser.Run(t, ctx, "create a beet",
		chromedp.SendKeys(chromedp.ID("name"), "Checkout succeeded"),
		chromedp.Click(chromedp.CSS(`form[action="/beets"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("ingest-url")))

	// Copy the URL: the button says so; revealing shows the same URL.
	testbrowser.Run(t, ctx, "copy the URL", chromedp.Click(chromedp.CSS(`button[data-copy^="http"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("toast").textContent === "Copied"`, chromedp.WithPollingTimeout(5*time.Second)))
	masked := text(t, ctx, "#ingest-url")
	testbrowser.Run(t, ctx, "reveal", chromedp.Click(chromedp.CSS(`#send [data-reveal]`)))
	ingestURL := text(t, ctx, "#ingest-url")
	if !strings.HasPrefix(ingestURL, base+"/api/v1/beet/bt_") || strings.Contains(masked, ingestURL[len(ingestURL)-20:]) {
		t.Fatalf("ingestion URL %q (masked %q)", ingestURL, masked)
	}
	if got := attr(t, ctx, `button[data-copy^="http"]`, "data-copy"); got != ingestURL {
		t.Fatalf("the copy button copies %q, the page shows %q", got, ingestURL)
	}
	snippet := func(id string) string {
		return attr(t, ctx, fmt.Sprintf(`button[aria-describedby="sn-%s"]`, id), "data-copy")
	}
	site := newForeignSite(t)
	site.set(snippet("img"), snippet("fetch"), snippet("beacon"))
	if !strings.Contains(snippet("fetch"), "value: 5") {
		t.Fatalf("fetch snippet %q does not send a value of 5", snippet("fetch"))
	}

	// The other site's page fires the three beacons.
	testbrowser.Run(t, ctx, "load the shop page", chromedp.Navigate(site.url),
		chromedp.Poll[chromedp.Void](`document.title === "sent"`, chromedp.WithPollingTimeout(10*time.Second)))
	deadline := time.Now().Add(10 * time.Second)
	for len(eventsOf(t, a, 1)) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	ev := eventsOf(t, a, 1)
	methods, fives := map[string]int{}, 0
	for _, e := range ev {
		methods[e.Method]++
		if e.Value != nil && *e.Value == 5 {
			fives++
		}
	}
	if len(ev) != 3 || methods["GET"] != 1 || methods["POST"] != 2 || fives != 1 {
		t.Fatalf("events recorded: %d, methods %v, %d with value 5; want 3: one GET, two POST, one with 5", len(ev), methods, fives)
	}

	// ...and the beet page shows them, with the chart drawn.
	testbrowser.Run(t, ctx, "see the events", chromedp.Navigate(base+"/beets/1"),
		chromedp.WaitVisible(chromedp.CSS("#events")),
		chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	rows := text(t, ctx, "#events")
	if strings.Count(rows, "POST") != 2 || strings.Count(rows, "GET") != 1 || !strings.Contains(rows, "5") {
		t.Fatalf("events table: %q", rows)
	}
	label := attr(t, ctx, "#chart", "aria-label")
	if !strings.HasPrefix(label, "3 events in the last 24h") {
		t.Errorf("chart says %q, want 3 events", label)
	}
	screenshot(t, ctx, "beet.png")
	testbrowser.Run(t, ctx, "list", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".beets")))
	if s := text(t, ctx, ".beets"); !strings.Contains(s, "Learning") || !strings.Contains(s, "3 / 24 h") {
		t.Errorf("list: %q", s)
	}
	screenshot(t, ctx, "beets.png")
	// Each bulk action submits a form: wait for the page it loads, or the next
	// step finds the old page (and its old notice) or aborts the load.
	submit := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.RunResponse(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	submit("pause every beet on the page", chromedp.Click(chromedp.CSS("[data-check-all]")),
		chromedp.Click(chromedp.CSS(`#bulk button[value="pause"]`)))
	if s := text(t, ctx, ".notice"); !strings.Contains(s, "1 beet paused") || !strings.Contains(text(t, ctx, ".beets"), "Paused") {
		t.Errorf("after the bulk pause: %q", s)
	}
	submit("resume it", chromedp.Click(chromedp.CSS("[data-check-all]")),
		chromedp.Click(chromedp.CSS(`#bulk button[value="resume"]`)))
	if s := text(t, ctx, ".notice"); !strings.Contains(s, "1 beet resumed") || strings.Contains(text(t, ctx, ".beets"), "Paused") {
		t.Errorf("after the bulk resume: %q", s)
	}
	testbrowser.Run(t, ctx, "phone-sized list", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(".beets")))
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil || wide {
		t.Errorf("the list scrolls sideways on a phone (%v)", err)
	}
	screenshot(t, ctx, "beets-phone.png")
	testbrowser.Run(t, ctx, "phone-sized beet page", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	wide, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil || wide {
		t.Errorf("the beet page scrolls sideways on a phone (%v)", err)
	}
	screenshot(t, ctx, "beet-phone.png")
	testbrowser.Run(t, ctx, "desktop again", chromedp.EmulateViewport(1280, 900))

	// The keyboard reaches the confirmation dialogs: Enter opens, Escape
	// closes without deleting.
	testbrowser.Run(t, ctx, "open the beet page", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.ID("ingest-url")),
		chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute("data-js") === "ready"`, chromedp.WithPollingTimeout(5*time.Second)))
	testbrowser.Run(t, ctx, "Enter on Delete…", chromedp.Focus(chromedp.CSS(`a[data-dialog="dlg-delete"]`)), pressKey("Enter", "\r", 13))
	testbrowser.Run(t, ctx, "the dialog opens with the focus on Cancel",
		chromedp.Poll[chromedp.Void](`document.getElementById("dlg-delete").open && document.activeElement.hasAttribute("data-close")`,
			chromedp.WithPollingTimeout(5*time.Second)))
	testbrowser.Run(t, ctx, "Escape closes it", pressKey("Escape", "", 27),
		chromedp.Poll[chromedp.Void](`!document.getElementById("dlg-delete").open`, chromedp.WithPollingTimeout(5*time.Second)))

	// Rotate: confirm in the dialog; the new token is shown.
	testbrowser.Run(t, ctx, "rotate", chromedp.Navigate(base+"/beets/1"),
		chromedp.Click(chromedp.CSS(`a[data-dialog="dlg-rotate"]`)),
		chromedp.WaitVisible(chromedp.ID("confirm-rotate")),
		chromedp.Click(chromedp.ID("confirm-rotate")),
		chromedp.WaitVisible(chromedp.CSS(`#send .notice`)))
	newURL := text(t, ctx, "#ingest-url")
	if newURL == ingestURL || !strings.HasPrefix(newURL, base+"/api/v1/beet/bt_") {
		t.Fatalf("after rotation the page shows %q (old %q)", newURL, ingestURL)
	}
	// The shop page still has the old snippets: nothing is recorded.
	testbrowser.Run(t, ctx, "old URL", chromedp.Navigate(site.url),
		chromedp.Poll[chromedp.Void](`document.title === "sent"`, chromedp.WithPollingTimeout(10*time.Second)))
	time.Sleep(time.Second) // sendBeacon has no completion to wait for
	if n := len(eventsOf(t, a, 1)); n != 3 {
		t.Fatalf("%d events after the old URL was called; want still 3", n)
	}
	// With the new snippets, it records again.
	testbrowser.Run(t, ctx, "new snippets", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.ID("ingest-url")))
	site.set(snippet("img"), snippet("fetch"), snippet("beacon"))
	testbrowser.Run(t, ctx, "new URL", chromedp.Navigate(site.url),
		chromedp.Poll[chromedp.Void](`document.title === "sent"`, chromedp.WithPollingTimeout(10*time.Second)))
	deadline = time.Now().Add(10 * time.Second)
	for len(eventsOf(t, a, 1)) < 6 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(eventsOf(t, a, 1)); n != 6 {
		t.Fatalf("%d events after the new URL was called; want 6", n)
	}
	testbrowser.Run(t, ctx, "page after rotation", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	// The open page shows a new event by itself, table and chart.
	resp, err := http.Get(newURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	testbrowser.Run(t, ctx, "the page refreshes itself",
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#events tr").length === 7 && /^7 events/.test(document.getElementById("chart").getAttribute("aria-label"))`,
			chromedp.WithPollingTimeout(18*time.Second), chromedp.WithPollingInterval(200*time.Millisecond)))
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
