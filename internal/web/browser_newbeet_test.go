package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testbrowser"
)

// The two screens the dashboard is checked at: a laptop and a phone.
var screens = []struct {
	name   string
	w, h   int64
	mobile bool
}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}}

func viewport(w, h int64, mobile bool) chromedp.Action[chromedp.Void] {
	if mobile {
		return chromedp.EmulateViewport(w, h, chromedp.EmulateMobile)
	}
	return chromedp.EmulateViewport(w, h)
}

// onFirstScreen lists the elements matched by each selector that are
// missing or not wholly inside the viewport at the top of the page, and
// whether the page is wider than the screen.
func onFirstScreen(t *testing.T, ctx context.Context, sels ...string) string {
	t.Helper()
	testbrowser.Run(t, ctx, "to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	return inView(t, ctx, sels...)
}

// inView is onFirstScreen where the page is scrolled now.
func inView(t *testing.T, ctx context.Context, sels ...string) string {
	t.Helper()
	bad, err := chromedp.Run(ctx, chromedp.Evaluate[string](`((sels) => {
		const vw = window.innerWidth, vh = window.innerHeight, bad = [];
		if (document.documentElement.scrollWidth > vw + 1) bad.push("page is " + document.documentElement.scrollWidth + " px wide");
		for (const sel of sels) {
			const els = document.querySelectorAll(sel);
			if (!els.length) bad.push(sel + " missing");
			for (const el of els) {
				const r = el.getBoundingClientRect();
				if (r.height <= 0 || r.top < 0 || r.bottom > vh || r.left < 0 || r.right > vw + 1)
					bad.push(sel + " at " + JSON.stringify([Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)]));
			}
		}
		return bad.join("; ");
	})(`+jsonString(sels)+`)`))
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

func jsonString(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("`" + s + "`")
	}
	b.WriteByte(']')
	return b.String()
}

// setValue sets a field's value as a script would (no input event).
func setValue(id, v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`document.getElementById(` + jsonString([]string{id})[1:len(jsonString([]string{id}))-1] + `).value = ` + jsonString([]string{v})[1:len(jsonString([]string{v}))-1])
}

func capture(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, name, png)
}

// TestBrowserNewBeet creates beets in chromium at 1280x800 and 390x844:
// the form previews a cron schedule's next three runs as it is typed, a
// refused cron line is explained next to its field, which has the focus,
// and the new beet's page shows its URL, a copy button and the curl,
// <img> and crontab lines on the first screen, with one banner and no
// chart.
func TestBrowserNewBeet(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	setUpAccount(t, ctx, base)
	for i, sc := range screens {
		testbrowser.Run(t, ctx, sc.name, viewport(sc.w, sc.h, sc.mobile), chromedp.Navigate(base+"/beets/new"), chromedp.WaitVisible(chromedp.ID("name")),
			chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute("data-js") === "ready"`, chromedp.WithPollingTimeout(5*time.Second)))
		if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("cron").offsetParent === null`)); err != nil || !hidden {
			t.Errorf("%s: the cron field shows before the cron choice (hidden=%v %v)", sc.name, hidden, err)
		}
		testbrowser.Run(t, ctx, "a cron schedule, previewed as typed",
			chromedp.SendKeys(chromedp.ID("name"), "Nightly backup "+sc.name),
			chromedp.Click(chromedp.CSS(`input[name=mode][value=cron]`)),
			chromedp.SendKeys(chromedp.ID("cron"), "0 25 * * *"),
			chromedp.Poll[chromedp.Void](`document.getElementById("cron").getAttribute("aria-invalid") === "true" && /not a valid cron/.test(document.getElementById("schedule-preview").textContent)`,
				chromedp.WithPollingTimeout(5*time.Second)))
		testbrowser.Run(t, ctx, "a valid line", setValue("cron", ""), chromedp.SendKeys(chromedp.ID("cron"), "0 2 * * 1-5"),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll("#preview-times li").length === 3 && !document.getElementById("cron").hasAttribute("aria-invalid")`,
				chromedp.WithPollingTimeout(5*time.Second)))
		times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#preview-times li")).map(li => li.textContent)`))
		if err != nil || len(times) != 3 {
			t.Fatalf("preview: %v %v", times, err)
		}
		for _, s := range times {
			if !strings.Contains(s, ", 02:00 ") || strings.HasPrefix(s, "Sat") || strings.HasPrefix(s, "Sun") {
				t.Errorf("%s: preview time %q, want a weekday at 02:00", sc.name, s)
			}
		}
		// Where the field being typed in is, its preview is too.
		testbrowser.Run(t, ctx, "the field in view", chromedp.Evaluate[chromedp.Void](`document.getElementById("cron").scrollIntoView({block: "center"})`))
		if bad := inView(t, ctx, "#cron", "#preview-times"); bad != "" {
			t.Errorf("%s: the field and its preview: %s", sc.name, bad)
		}
		capture(t, ctx, "new-beet-"+sc.name+".png")

		// Submitted with a bad line: the reason sits under the field, which has the focus.
		testbrowser.Run(t, ctx, "submit a bad line", setValue("cron", "0 2 * * 9"),
			chromedp.Click(chromedp.CSS(`form[action="/beets"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("cron-err")))
		where, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(() => {
			const f = document.getElementById("cron").getBoundingClientRect(), e = document.getElementById("cron-err").getBoundingClientRect();
			return {focus: document.activeElement.id, gap: e.top - f.bottom, left: e.left - f.left, bottom: e.bottom, vh: window.innerHeight};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if gap, _ := where["gap"].(float64); where["focus"] != "cron" || gap < 0 || gap > 24 || where["bottom"].(float64) > where["vh"].(float64) {
			t.Errorf("%s: after a refused cron line: %v; want the focus on the field and its reason right under it, on screen", sc.name, where)
		}
		capture(t, ctx, "new-beet-error-"+sc.name+".png")

		testbrowser.Run(t, ctx, "submit a good line", setValue("cron", "0 2 * * *"),
			chromedp.Click(chromedp.CSS(`form[action="/beets"] button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("start-lines")),
			chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute("data-js") === "ready"`, chromedp.WithPollingTimeout(5*time.Second)))
		id := int64(i + 1)
		if b, err := a.Backend().Service.Beet(context.Background(), 1, id); err != nil || b.Detection.Cron != "0 2 * * *" || b.Detection.Mode != beet.ModeCron {
			t.Errorf("%s: the beet made by the form: %+v %v", sc.name, b, err)
		}
		if bad := onFirstScreen(t, ctx, "#ingest-url", `#send button[data-copy^="http"]`, "#start-lines pre", "#start-lines button[data-copy]"); bad != "" {
			t.Errorf("%s: a new beet's URL and lines are not all on the first screen: %s", sc.name, bad)
		}
		if at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.getElementById("ingest-url").getBoundingClientRect().top,
			Array.from(document.querySelectorAll("#start-lines pre")).pop().getBoundingClientRect().bottom, window.innerHeight]`)); err == nil {
			t.Logf("%s: the URL at %.0f px, the last line ends at %.0f px of %.0f", sc.name, at[0], at[1], at[2])
		}
		banners, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll(".notice, .dayone, .error, #chart, #no-events")).filter(e => e.getClientRects().length).length`))
		if err != nil || banners != 0 {
			t.Errorf("%s: a new beet's page shows %d banners or empty charts besides its first block (%v)", sc.name, banners, err)
		}
		if got := text(t, ctx, "#start-lines"); !strings.Contains(got, "curl -fsS") || !strings.Contains(got, "<img src=") || !strings.Contains(got, "0 2 * * * /path/to/job") {
			t.Errorf("%s: the first block's lines: %q", sc.name, got)
		}
		capture(t, ctx, "new-beet-page-"+sc.name+".png")

		// A refused detection setting on the beet's page: explained under
		// its field, which has the focus and is on screen.
		testbrowser.Run(t, ctx, "a period too short", chromedp.Click(chromedp.CSS(`#detection input[name=mode][value=period]`)),
			setValue("period_minutes", "0.5"), chromedp.Click(chromedp.CSS(`#detection button.primary[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID("det-period-err")))
		if bad := inView(t, ctx, "#period_minutes", "#det-period-err"); bad != "" {
			t.Errorf("%s: the refused period: %s", sc.name, bad)
		}
		if focus, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`)); err != nil || focus != "period_minutes" {
			t.Errorf("%s: the focus after a refused period is on %q (%v)", sc.name, focus, err)
		}
	}
	// Chrome logs the refused form's 422 answer as a failed load.
	for _, e := range consoleErrors() {
		if !strings.Contains(e, "status of 422") {
			t.Errorf("console error: %s", e)
		}
	}
}

// TestBrowserPhoneWidths opens every kind of page with real history at
// 390x844 (and 1280x800): no page is wider than the screen, and every
// table cell (status, reason, error) lies within it, so nothing is read by
// scrolling sideways.
func TestBrowserPhoneWidths(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, func(c *config.Config) { c.AllowPrivateTargets = true })
	base := a.URL()
	setUpAccount(t, ctx, base)
	seedHistory(t, a)
	svc, bg := a.Backend().Service, context.Background()
	for _, name := range []string{"Wall display in the ops room", "Nightly reporting script"} {
		if _, _, err := svc.CreateScopedAPIKey(bg, 1, name, name != "Nightly reporting script"); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := svc.CreateChannel(bg, 1, service.ChannelInput{Kind: beet.ChannelWebhook, Name: "On-call webhook",
		Config: beet.ChannelConfig{URL: "http://127.0.0.1:9/hooks/beet-alerts-for-the-on-call-rotation"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.TestChannel(bg, 1, ch.ID); err != nil {
		t.Logf("test message: %v", err)
	}
	start := time.Now().Add(24 * time.Hour)
	end := start.Add(2 * time.Hour)
	if err := svc.CreateMaintenance(bg, 1, &beet.MaintenanceWindow{BeetID: 2, Start: &start, End: &end, Note: "Database upgrade to the next major version"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddUser(bg, 1, "bartholomew.longname@example.com", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	// A phone, and a desktop browser's window as narrow as one (no mobile
	// viewport rules: the account page was 488 px wide there).
	widths := append(screens, struct {
		name   string
		w, h   int64
		mobile bool
	}{"narrow window", 390, 844, false})
	pages := []string{"/", "/beets/1", "/beets/2", "/beets/3", "/beets/4", "/beets/5", "/beets/new", "/account",
		"/account/channels/1", "/account/channels/new", "/account/maintenance/new", "/unknown-tokens"}
	for _, sc := range widths {
		testbrowser.Run(t, ctx, sc.name, viewport(sc.w, sc.h, sc.mobile))
		for _, p := range pages {
			testbrowser.Run(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main")),
				chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute("data-js") === "ready"`, chromedp.WithPollingTimeout(5*time.Second)))
			bad, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
				const vw = window.innerWidth, bad = [];
				if (document.documentElement.scrollWidth > vw + 1) bad.push("the page is " + document.documentElement.scrollWidth + " px wide");
				for (const td of document.querySelectorAll("td")) {
					const r = td.getBoundingClientRect();
					if (r.width > 0 && (r.left < 0 || r.right > vw + 1))
						bad.push("cell " + JSON.stringify(td.textContent.trim().slice(0, 40)) + " at " + Math.round(r.left) + "-" + Math.round(r.right));
				}
				return bad.slice(0, 5).join("; ");
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if bad != "" {
				t.Errorf("%s %s: %s", sc.name, p, bad)
			}
		}
		if sc.mobile {
			testbrowser.Run(t, ctx, "account", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(chromedp.ID("keys")),
				chromedp.ScrollIntoView(chromedp.ID("keys")))
			capture(t, ctx, "account-keys-phone.png")
			testbrowser.Run(t, ctx, "a beet's history", chromedp.Navigate(base+"/beets/3"), chromedp.WaitVisible(chromedp.ID("history")),
				chromedp.ScrollIntoView(chromedp.ID("history")))
			capture(t, ctx, "history-phone.png")
			testbrowser.Run(t, ctx, "a channel's deliveries", chromedp.Navigate(base+"/account/channels/1"), chromedp.WaitVisible(chromedp.CSS("main table")),
				chromedp.ScrollIntoView(chromedp.CSS("main table")))
			capture(t, ctx, "deliveries-phone.png")
		}
	}
	// Without JavaScript tables do not stack but scroll inside their
	// cards: the page itself still fits (a visually hidden heading inside
	// a scrolling table once made the account page 488 px wide).
	testbrowser.Run(t, ctx, "no script", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	for _, sc := range widths[1:] {
		testbrowser.Run(t, ctx, sc.name, viewport(sc.w, sc.h, sc.mobile))
		for _, p := range pages {
			testbrowser.Run(t, ctx, p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS("main")))
			w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
			if err != nil || w[0] > w[1] {
				t.Errorf("%s without script, %s: the page is %v px wide (%v)", sc.name, p, w, err)
			}
		}
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
