package web_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testbrowser"
)

// TestScreenshotsWithHistory fills a Beet with ten days of made-up but
// plausible history (a learned checkout rhythm with an outage, a nightly
// job, a webhook that went down, a paused and a new beet) and saves the
// screenshots the README shows. It checks what the pictures promise: the
// learned band and the state changes are on the chart.
func TestScreenshotsWithHistory(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	setUpAccount(t, ctx, base)
	seedHistory(t, a)

	testbrowser.Run(t, ctx, "list", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".beets")))
	screenshot(t, ctx, "readme-beets.png")
	// On a desktop each beet is one line: status, name, rhythm in words,
	// last event and next check side by side.
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]any](`Array.from(document.querySelectorAll(".beets > li")).map(li => {
		const r = li.getBoundingClientRect(), line = li.querySelector(".name").getBoundingClientRect().height;
		const mid = sel => { const e = li.querySelector(sel); if (!e) return -1; const b = e.getBoundingClientRect(); return b.top + b.height / 2 - r.top; };
		return {name: li.querySelector(".name").textContent, lines: r.height / line,
			mids: [".badge", ".name", ".rhythm", ".last", ".next"].map(mid).map(Math.round),
			rhythm: li.querySelector(".rhythm").textContent, last: li.querySelector(".last").textContent, next: li.querySelector(".next").textContent.trim()};
	})`))
	if err != nil || len(rows) != 5 {
		t.Fatalf("list rows: %v %v", rows, err)
	}
	rhythms := map[string]string{"Nightly backup": "02:00", "Stripe webhook received": "30 min"}
	for _, r := range rows {
		name, _ := r["name"].(string)
		if lines, _ := r["lines"].(float64); lines > 2.6 {
			t.Errorf("%s takes %.1f lines on a desktop", name, lines)
		}
		// The rhythm shares the name's line (cut with an ellipsis rather
		// than wrapped); status, last event and next check sit beside them.
		mids, _ := r["mids"].([]any)
		nameMid, _ := mids[1].(float64)
		if d, _ := mids[2].(float64); math.Abs(d-nameMid) > 6 {
			t.Errorf("%s: the rhythm is not on the name's line (%v)", name, mids)
		}
		for _, i := range []int{0, 3, 4} {
			if d, _ := mids[i].(float64); math.Abs(d-nameMid) > 14 {
				t.Errorf("%s: part %d of the row is not beside the name (%v)", name, i, mids)
			}
		}
		if want, ok := rhythms[name]; ok && !strings.Contains(r["rhythm"].(string), want) {
			t.Errorf("%s: rhythm %q, want it to say %q", name, r["rhythm"], want)
		}
		if name == "Checkout succeeded" || name == "Nightly backup" {
			if last, next := r["last"].(string), r["next"].(string); !strings.HasSuffix(last, " ago") || !strings.HasPrefix(strings.TrimPrefix(next, "Next check "), "in ") {
				t.Errorf("%s: last event %q, next check %q; want \"… ago\" and \"in …\"", name, last, next)
			}
		}
	}
	testbrowser.Run(t, ctx, "checkout, 7 days", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")),
		chromedp.Click(chromedp.CSS(`[data-range="7d"]`)),
		chromedp.Poll[chromedp.Void](`/events in the last 7d/.test(document.getElementById("chart").getAttribute("aria-label"))`,
			chromedp.WithPollingTimeout(5*time.Second)))
	label := attr(t, ctx, "#chart", "aria-label")
	if want := "with the expected band"; !strings.Contains(label, want) || !strings.Contains(label, "state changes marked") {
		t.Errorf("chart label %q: want the band and the state changes", label)
	}
	if got := legendShown(t, ctx); got != "band flips values" {
		t.Errorf("the checkout's legend names %q; want the band, the state changes and the values", got)
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("activity")))
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-chart.png", png)
	testbrowser.Run(t, ctx, "top of the page", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-beet.png", png)
	testbrowser.Run(t, ctx, "down beet", chromedp.Navigate(base+"/beets/3"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("summary")))
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-down.png", png)
	// A job's run times are charted: one point per run, the failure apart,
	// the run-time limit drawn.
	testbrowser.Run(t, ctx, "nightly backup, 7 days", chromedp.Navigate(base+"/beets/2"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")),
		chromedp.Click(chromedp.CSS(`[data-range="7d"]`)),
		chromedp.WaitVisible(chromedp.CSS("#runs-chart canvas")),
		chromedp.Poll[chromedp.Void](`/^[0-9]+ runs ended in the last 7d, 1 failed; the longest took .*; run-time limit 30 min$/.test(document.getElementById("runs-chart").getAttribute("aria-label"))`,
			chromedp.WithPollingTimeout(5*time.Second)))
	png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("activity")))
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-runs.png", png)
	if got := legendShown(t, ctx); got != "flips" {
		t.Errorf("the nightly backup's legend names %q; want only the state changes (no band, no values)", got)
	}
	testbrowser.Run(t, ctx, "a beet without runs", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("runs").hidden`)); err != nil || !hidden {
		t.Errorf("the run-time chart shows on a beet without runs (hidden=%v, %v)", hidden, err)
	}
	// The snippets are one tabbed block: one panel shows at a time; a
	// click or the arrow keys pick another.
	shown := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("[role=tabpanel]")).filter(p => p.getClientRects().length > 0).map(p => p.id).join(" ")`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := shown(); got != "panel-img" {
		t.Errorf("snippet panels shown at first: %q, want panel-img alone", got)
	}
	testbrowser.Run(t, ctx, "the job wrapper tab", chromedp.Click(chromedp.ID("tab-wrapper")))
	if got := shown(); got != "panel-wrapper" {
		t.Errorf("after clicking the wrapper tab: %q", got)
	}
	if w := text(t, ctx, "#panel-wrapper pre"); !strings.Contains(w, "/start") || !strings.Contains(w, "/$?") {
		t.Errorf("the wrapper snippet %q lacks /start or /$?", w)
	}
	testbrowser.Run(t, ctx, "arrow right wraps around", chromedp.Focus(chromedp.ID("tab-wrapper")), pressKey("ArrowRight", "", 39))
	if got := shown(); got != "panel-img" || attr(t, ctx, "#tab-img", "aria-selected") != "true" {
		t.Errorf("after ArrowRight on the last tab: %q", got)
	}
	testbrowser.Run(t, ctx, "account", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(chromedp.ID("keys")))
	screenshot(t, ctx, "readme-account.png")
	testbrowser.Run(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(".beets")))
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-beets-phone.png", png)
	// The list fits a phone's width: nothing to scroll sideways, and every
	// row's status and name are on screen.
	phoneList, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const vw = window.innerWidth, bad = [];
		if (document.documentElement.scrollWidth > vw + 1) bad.push("page is " + document.documentElement.scrollWidth + " wide");
		const rows = document.querySelectorAll(".beets > li");
		if (rows.length === 0) bad.push("no rows");
		for (const sel of [".badge", "a.name"]) {
			for (const el of document.querySelectorAll(".beets " + sel)) {
				const r = el.getBoundingClientRect();
				if (r.width <= 0 || r.left < 0 || r.right > vw + 1) bad.push(sel + " " + el.textContent.trim() + " at " + r.left + "-" + r.right);
			}
		}
		return bad.join("; ");
	})()`))
	if err != nil || phoneList != "" {
		t.Errorf("the list on a 390 px phone: %s %v", phoneList, err)
	}

	// On a phone, a beet's state, its reason and the chart fit the first
	// screen: no scrolling to learn whether it is down and why.
	testbrowser.Run(t, ctx, "down beet on a phone", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
	firstScreen := func(what, path string) {
		testbrowser.Run(t, ctx, what, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS("#chart canvas")))
		outside, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const vw = window.innerWidth, vh = window.innerHeight, bad = [];
		for (const id of ["status", "reason", "chart"]) {
			const el = document.getElementById(id);
			if (!el) { bad.push(id + " missing"); continue; }
			const r = el.getBoundingClientRect();
			if (r.height <= 0 || r.top < 0 || r.bottom > vh || r.left < 0 || r.right > vw + 1)
				bad.push(id + " at " + JSON.stringify([r.left, r.top, r.right, r.bottom]) + " outside " + vw + "x" + vh);
		}
		return bad.join("; ");
	})()`))
		if err != nil || outside != "" {
			t.Errorf("%s on a 390x844 phone, without scrolling: %s %v", path, outside, err)
		}
	}
	firstScreen("phone-sized job beet (runs charted)", "/beets/2")
	// Over 7 days, as on the desktop: the last 24 hours hold no finished
	// run between 02:00 and about 02:11 UTC.
	testbrowser.Run(t, ctx, "its run-time chart", chromedp.Click(chromedp.CSS(`[data-range="7d"]`)),
		chromedp.WaitVisible(chromedp.CSS("#runs-chart canvas")), chromedp.ScrollIntoView(chromedp.ID("runs")))
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-runs-phone.png", png)
	firstScreen("phone-sized down beet", "/beets/3")
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtefact(t, "readme-beet-phone.png", png)
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// seedHistory writes the made-up history straight to the store, with the
// detector's own model, as if Beet had been watching for ten days.
func seedHistory(t *testing.T, a *app.App) {
	t.Helper()
	ctx := context.Background()
	svc, st := a.Backend().Service, a.Backend().Store
	now := time.Now().UTC()
	start := now.Add(-10 * 24 * time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(name, tz string, d *beet.Detection) *beet.Beet {
		b, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: name, Timezone: tz, Detection: d})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	add := func(b *beet.Beet, times []time.Time) {
		ev := make([]beet.Event, len(times))
		for i, at := range times {
			var id beet.EventID
			id[0], id[1], id[2], id[3] = byte(b.ID), byte(i>>16), byte(i>>8), byte(i)
			ev[i] = beet.Event{ID: id, BeetID: b.ID, ReceivedAt: at.Truncate(time.Microsecond), Method: "GET",
				UserAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15"}
			if i%3 == 0 {
				v := float64(20 + rng.IntN(180))
				ev[i].Value, ev[i].Method = &v, "POST"
			}
		}
		if err := st.AddEvents(ctx, ev, nil); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(b *beet.Beet, at time.Time, from, to beet.Status, kind beet.FlipKind, reason string) {
		if err := st.SetBeetStatus(ctx, &beet.Flip{BeetID: b.ID, At: at, From: from, To: to, Kind: kind, Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Checkout: busy by day in Riga, quiet at night, an outage today.
	riga, _ := time.LoadLocation("Europe/Riga")
	checkout := mk("Checkout succeeded", "Europe/Riga", nil)
	outFrom, outTo := now.Add(-7*time.Hour), now.Add(-5*time.Hour)
	var times []time.Time
	for t0 := start; t0.Before(now); t0 = t0.Add(time.Hour) {
		h := t0.In(riga).Hour()
		rate := 1.0
		if h >= 8 && h < 23 {
			rate = 9
		}
		for n := poisson(rng, rate); n > 0; n-- {
			at := t0.Add(time.Duration(rng.Int64N(int64(time.Hour))))
			if at.Before(now) && (at.Before(outFrom) || at.After(outTo)) {
				times = append(times, at)
			}
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	add(checkout, times)
	model := detect.NewRateModel(riga)
	for _, at := range times {
		model.Observe(at, 1)
	}
	enc, _ := model.MarshalBinary()
	// Store the model through the ingestion observer, re-adding the last
	// event (same ID, so no new row).
	i := len(times) - 1
	var id beet.EventID
	id[0], id[1], id[2], id[3] = byte(checkout.ID), byte(i>>16), byte(i>>8), byte(i)
	setModel := func(b *beet.Beet, _ beet.EventSpan) []beet.Flip { b.Model = enc; return nil }
	if err := st.AddEvents(ctx, []beet.Event{{ID: id, BeetID: checkout.ID, ReceivedAt: times[i].Truncate(time.Microsecond), Method: "GET"}}, setModel); err != nil {
		t.Fatal(err)
	}
	flip(checkout, times[0], beet.StatusNew, beet.StatusLearning, beet.FlipFirst, "First event received. Beet is learning its rhythm; "+detect.ArmingRule.Meanwhile()+".")
	flip(checkout, times[0].Add(7*24*time.Hour), beet.StatusLearning, beet.StatusUp, beet.FlipLearned, "Learned this beet's rhythm: "+model.Describe(now)+".")
	flip(checkout, outFrom.Add(40*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence,
		"No event since "+outFrom.In(riga).Format("Jan 2 15:04 MST")+" (40 min); about 6 would usually have come by now.")
	flip(checkout, outTo.Add(5*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back after being down for 1 h 25 min.")
	due := func(b *beet.Beet, at time.Time) {
		if err := st.SetBeetDue(ctx, b.ID, &at); err != nil {
			t.Fatal(err)
		}
	}
	due(checkout, now.Add(17*time.Minute))

	// 2. Nightly backup: a cron job at 02:00 UTC, every night.
	// It wraps itself in job signals (a start, then its exit code), so
	// each night is a run with its duration; one night it failed.
	backup := mk("Nightly backup", "UTC", &beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "UTC", GraceSeconds: 1800, MaxRuntimeSeconds: 1800})
	var runs []beet.Event
	night := 0
	// A night's run ends at most 10 min 40 s after 02:00: tonight's counts
	// only once it is over, or a test run at 02:05 UTC would show its end
	// in the future ("Last in 28 s").
	for d := start.Truncate(24 * time.Hour).Add(24*time.Hour + 2*time.Hour); d.Add(11 * time.Minute).Before(now); d = d.Add(24 * time.Hour) {
		began := d.Add(time.Duration(rng.IntN(40)) * time.Second)
		end := began.Add(time.Duration(180+rng.IntN(420)) * time.Second)
		code := 0
		if night == 5 {
			code, end = 2, began.Add(75*time.Second)
		}
		for i, e := range []beet.Event{{ReceivedAt: began, Kind: beet.KindStart}, {ReceivedAt: end, Kind: beet.KindPing, ExitCode: &code}} {
			e.ID[0], e.ID[1], e.ID[2] = byte(backup.ID), byte(night), byte(i)
			e.BeetID, e.Method, e.UserAgent, e.ReceivedAt = backup.ID, "GET", "curl/8.5.0", e.ReceivedAt.Truncate(time.Microsecond)
			if code != 0 && i == 1 {
				e.Kind, e.Method, e.Message = beet.KindFail, "POST", "pg_dump: error: connection to server failed"
			}
			runs = append(runs, e)
		}
		night++
	}
	if err := st.AddEvents(ctx, runs, nil); err != nil {
		t.Fatal(err)
	}
	flip(backup, runs[1].ReceivedAt, beet.StatusNew, beet.StatusUp, beet.FlipFirst, "First event received. "+detect.Expectation(backup))
	failedAt := runs[11].ReceivedAt
	flip(backup, failedAt, beet.StatusUp, beet.StatusDown, beet.FlipFailed, "The job reported failure (exit code 2) at "+failedAt.Format("15:04 MST")+".")
	flip(backup, runs[13].ReceivedAt, beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "The job succeeded at "+runs[13].ReceivedAt.Format("15:04 MST")+" with exit code 0 after being down for 1 day.")
	nextRun := now.Truncate(24 * time.Hour).Add(2*time.Hour + 30*time.Minute)
	if nextRun.Before(now) {
		nextRun = nextRun.Add(24 * time.Hour)
	}
	due(backup, nextRun)

	// 3. Stripe webhook: every few minutes until two hours ago.
	hook := mk("Stripe webhook received", "UTC", &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 1800, GraceSeconds: 600})
	times = nil
	stop := now.Add(-2 * time.Hour)
	for at := start.Add(5 * 24 * time.Hour); at.Before(stop); at = at.Add(time.Duration(2+rng.IntN(12)) * time.Minute) {
		times = append(times, at)
	}
	add(hook, times)
	flip(hook, times[0], beet.StatusNew, beet.StatusUp, beet.FlipFirst, "First event received. "+detect.Expectation(hook))
	last := times[len(times)-1]
	flip(hook, last.Add(40*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence,
		"No event since "+last.Format("Jan 2 15:04 MST")+" (40 min); expected one at least every 30 min, plus 10 min grace.")

	// 4. A paused beet and 5. a new one.
	paused := mk("Newsletter signup", "Europe/Berlin", nil)
	add(paused, []time.Time{now.Add(-50 * time.Hour), now.Add(-49 * time.Hour)})
	flip(paused, now.Add(-50*time.Hour), beet.StatusNew, beet.StatusLearning, beet.FlipFirst, "First event received. Beet is learning its rhythm; "+detect.ArmingRule.Meanwhile()+".")
	if _, err := svc.Pause(ctx, 1, paused.ID); err != nil {
		t.Fatal(err)
	}
	mk("Search API heartbeat", "UTC", nil)
	for id, tags := range map[int64]string{checkout.ID: "shop, prod", backup.ID: "ops, prod", hook.ID: "shop, payments", paused.ID: "marketing"} {
		if _, err := svc.SetBeetTags(ctx, 1, id, tags); err != nil {
			t.Fatal(err)
		}
	}
}

func poisson(rng *rand.Rand, mean float64) int {
	n, p := 0, rng.Float64()
	for l := math.Exp(-mean); p > l; p *= rng.Float64() {
		n++
	}
	return n
}

// legendShown lists the chart legend's optional keys that are shown.
func legendShown(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#chart-legend [data-legend]")).filter(k => !k.hidden).map(k => k.getAttribute("data-legend")).join(" ")`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
