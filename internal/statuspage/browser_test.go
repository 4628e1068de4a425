package statuspage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/beethq/beet/internal/testbrowser"
)

// TestBrowserPublicPage opens the status page in headless Chromium with
// scripts turned off, on a 390x844 phone and a 1280x800 desktop: nothing
// scrolls sideways, the inline style is allowed by the page's CSP (a
// refused style is a console error), each beet's 90 days fill its bar
// row, and the screenshots are saved (docs/img/status-page.png is the
// desktop one).
func TestBrowserPublicPage(t *testing.T) {
	ctx, consoleErrors := testbrowser.New(t)
	f := newFixture(t, "sqlite")
	testbrowser.Run(t, ctx, "scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))

	type layout struct {
		Wide    bool
		Banner  string
		Colour  string
		Rows    int
		Bars    []float64 // per beet: the width its days fill, as a share of its row
		Runs    int
		Visible bool
	}
	for _, size := range []struct {
		name string
		w, h int64
		file string
	}{{"phone", 390, 844, "status-page-phone.png"}, {"desktop", 1280, 800, "status-page.png"}} {
		opts := []chromedp.EmulateViewportOption{}
		if size.w < 600 {
			opts = append(opts, chromedp.EmulateMobile)
		}
		testbrowser.Run(t, ctx, size.name, chromedp.EmulateViewport(size.w, size.h, opts...), chromedp.Navigate(f.srv.URL+"/status/acme"),
			chromedp.WaitVisible(chromedp.CSS(".banner")))
		// Evaluate runs in the page's world even with its scripts off.
		l, err := chromedp.Run(ctx, chromedp.Evaluate[layout](`(() => {
			const b = document.querySelector(".banner");
			const rows = Array.from(document.querySelectorAll(".bars"));
			return {
				Wide: document.documentElement.scrollWidth > window.innerWidth + 1,
				Banner: b.textContent.trim(),
				Colour: getComputedStyle(b).backgroundColor,
				Rows: rows.length,
				Bars: rows.map(r => Array.from(r.children).reduce((w, i) => w + i.getBoundingClientRect().width, 0) / r.getBoundingClientRect().width),
				Runs: document.querySelectorAll(".bars i").length,
				Visible: rows.every(r => r.getBoundingClientRect().height >= 20 && r.getBoundingClientRect().width > 300),
			};
		})()`))
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		if l.Wide {
			t.Errorf("%s: the page scrolls sideways", size.name)
		}
		if l.Banner != "Major outage" || l.Colour == "rgba(0, 0, 0, 0)" {
			t.Errorf("%s: banner %q in %s; want the words on the style's colour", size.name, l.Banner, l.Colour)
		}
		if l.Rows != 5 || !l.Visible {
			t.Errorf("%s: %d bar rows (visible %v), want 5 beets' bars", size.name, l.Rows, l.Visible)
		}
		for i, share := range l.Bars {
			if share < 0.99 || share > 1.01 {
				t.Errorf("%s: beet %d's days fill %.2f of its row", size.name, i+1, share)
			}
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		dir := os.Getenv("BEET_TEST_ARTEFACTS")
		if dir == "" {
			dir = filepath.Join("..", "..", "artefacts", "screenshots")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, size.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors (a style or resource the CSP refused?): %s", strings.Join(errs, "; "))
	}
}
