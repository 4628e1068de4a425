package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beethq/beet/internal/testbrowser"
)

// keepPlots makes every page keep the uPlot charts it draws in
// window.plots, so a test can read what a chart was told to draw.
const keepPlots = `(() => {
  let real;
  window.plots = [];
  Object.defineProperty(window, "uPlot", { configurable: true,
    get() { return real; },
    set(U) {
      function Kept(opts, data, el) { const u = new U(opts, data, el); window.plots.push(u); return u; }
      Object.setPrototypeOf(Kept, U);
      Kept.prototype = U.prototype;
      real = Kept;
    } });
})()`

// openCheckout opens the checkout beet of TestScreenshotsWithHistory,
// which has a learned band and values sent in bodies, with its chart
// drawn and kept in window.plots.
func openCheckout(t *testing.T) (context.Context, func() []string) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, nil)
	base := a.URL()
	onEveryPage(t, ctx, "keep the charts", keepPlots)
	setUpAccount(t, ctx, base)
	seedHistory(t, a)
	testbrowser.Run(t, ctx, "checkout", chromedp.Navigate(base+"/beets/1"), chromedp.WaitVisible(chromedp.CSS("#chart canvas")),
		chromedp.Poll[chromedp.Void](`window.plots.length > 0`, chromedp.WithPollingTimeout(5*time.Second)))
	return ctx, consoleErrors
}

// TestBrowserChartBand: on a beet with both a learned band and values
// sent in bodies, the shading lies between the band's own high and low
// edges, not between the values line and one edge.
func TestBrowserChartBand(t *testing.T) {
	ctx, consoleErrors := openCheckout(t)
	if got := legendShown(t, ctx); got != "band flips values" {
		t.Fatalf("the checkout's legend names %q; want the band, the state changes and the values", got)
	}
	bands, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const u = window.plots[0];
		return u.bands.map(b => b.series.map(i => u.series[i].label).join(" to "));
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Expected (high) to Expected (low)"; strings.Join(bands, "; ") != want {
		t.Errorf("the chart shades %q; want %q", bands, want)
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowserChartAxis: the time axis writes times as the tables do, on a
// 24-hour clock with ISO dates ("15:00", "12-04"), over 24 h and 7 days.
func TestBrowserChartAxis(t *testing.T) {
	ctx, consoleErrors := openCheckout(t)
	label := regexp.MustCompile(`^([0-2][0-9]:[0-5][0-9](\n([0-9]{4}-)?[01][0-9]-[0-3][0-9])?|([0-9]{4}-)?[01][0-9]-[0-3][0-9])$`)
	for _, r := range []string{"24h", "7d", "30d"} {
		testbrowser.Run(t, ctx, r, chromedp.Evaluate[chromedp.Void](`window.plots = []`), chromedp.Click(chromedp.CSS(`[data-range="`+r+`"]`)),
			chromedp.Poll[chromedp.Void](`window.plots.length > 0`, chromedp.WithPollingTimeout(5*time.Second)))
		ticks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.plots[0].axes[0]._values.map(String)`))
		if err != nil || len(ticks) < 3 {
			t.Fatalf("%s: ticks %q (%v)", r, ticks, err)
		}
		for _, tick := range ticks {
			if !label.MatchString(tick) {
				t.Errorf("%s: the time axis says %q; want 24-hour times and ISO dates (all: %q)", r, tick, ticks)
				break
			}
		}
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
