// Package testbrowser starts Debian's headless chromium for browser tests
// and collects what the pages write to the console.
package testbrowser

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package puts the browser
// (installed by .ci/run).
const ChromiumPath = "/usr/lib/chromium/chromium"

// New starts headless chromium with its own profile (and opts on top), and
// returns its context and a function that reports the console errors and
// uncaught exceptions the pages raised so far. Without chromium the test
// is skipped, unless BEET_TEST_BROWSER or CI says browser tests must run.
func New(t *testing.T, opts ...chromedp.ExecAllocatorOption) (context.Context, func() []string) {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("BEET_TEST_BROWSER") != "" || os.Getenv("CI") != "" {
			t.Fatalf("browser tests must run here, but %s is missing: apt-get install -y chromium", ChromiumPath)
		}
		t.Skipf("browser tests skipped: %s is missing (apt-get install -y chromium, or run .ci/run)", ChromiumPath)
	}
	all := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(ChromiumPath), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir())}, opts...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), all...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var bad []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bad...) }
}

// Run runs browser steps within 30 seconds, failing the test on error.
func Run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
