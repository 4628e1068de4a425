package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testbrowser"
)

// TestBrowserChannels adds a webhook channel from the account page in a
// real browser, with the form showing only the chosen kind's fields,
// sends a test message, sees it delivered in the log, and opens and
// cancels the delete dialog, with no console error on the way.
func TestBrowserChannels(t *testing.T) {
	ctx, consoleErrors := newChrome(t)
	a := startApp(t, func(c *config.Config) { c.AllowPrivateTargets = true })
	rc := newReceiver(t)
	base := a.URL()
	setUpAccount(t, ctx, base)

	testbrowser.Run(t, ctx, "account page", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(chromedp.ID("channels")),
		chromedp.Click(chromedp.CSS(`a[href="/account/channels/new"]`)), chromedp.WaitVisible(chromedp.ID("c-kind")),
		chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute("data-js") === "ready"`, chromedp.WithPollingTimeout(5*time.Second)))
	visible := func(id string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").offsetParent !== null`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if !visible("c-url") || !visible("c-secret") || visible("c-to") || visible("c-rk") {
		t.Errorf("webhook form shows url %v secret %v to %v routing key %v; want url and secret only",
			visible("c-url"), visible("c-secret"), visible("c-to"), visible("c-rk"))
	}
	pick := func(kind string) {
		t.Helper()
		testbrowser.Run(t, ctx, "pick "+kind, chromedp.Evaluate[chromedp.Void](`(function () { var s = document.getElementById("c-kind");
			s.value = "`+kind+`"; s.dispatchEvent(new Event("change", { bubbles: true })); })()`))
	}
	pick("email")
	if visible("c-url") || !visible("c-to") {
		t.Errorf("email form: url %v to %v; want the address only", visible("c-url"), visible("c-to"))
	}
	// A service-URL kind: the URL field and that service's explanation,
	// with its example, and no other's.
	pick("gotify")
	if !visible("c-url") || visible("c-secret") || !visible("help-gotify") || visible("help-telegram") ||
		!strings.Contains(text(t, ctx, "#help-gotify"), "gotify://gotify.example.com/") {
		t.Errorf("gotify form: url %v secret %v gotify help %v telegram help %v; want the URL and Gotify's help only",
			visible("c-url"), visible("c-secret"), visible("help-gotify"), visible("help-telegram"))
	}
	screenshot(t, ctx, "channel-new-gotify.png")
	// The service's error shows next to its field, the kind kept.
	pick("pagerduty")
	testbrowser.Run(t, ctx, "a short routing key",
		chromedp.SendKeys(chromedp.ID("c-name"), "Pager"),
		chromedp.SendKeys(chromedp.ID("c-rk"), "short"),
		chromedp.Click(chromedp.CSS(`form[data-channel-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("c-rk-err")))
	if s := text(t, ctx, "#c-rk-err"); !strings.Contains(s, "32-character") || attr(t, ctx, "#c-rk", "aria-invalid") != "true" || visible("c-url") {
		t.Errorf("routing key error %q, url visible %v", s, visible("c-url"))
	}
	screenshot(t, ctx, "channel-new-error.png")
	testbrowser.Run(t, ctx, "clear the name", chromedp.Clear(chromedp.ID("c-name")))
	pick("webhook")
	testbrowser.Run(t, ctx, "add a webhook",
		chromedp.SendKeys(chromedp.ID("c-name"), "Ops hook"),
		chromedp.SendKeys(chromedp.ID("c-url"), rc.URL+"/hooks/secret-path-123456"),
		chromedp.SendKeys(chromedp.ID("c-secret"), "whsec_browser"),
		chromedp.Click(chromedp.CSS(`form[data-channel-form] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("send-test")))
	if s := text(t, ctx, "#c-target"); strings.Contains(s, "secret-path-123456") || !strings.HasPrefix(s, rc.URL+"/") {
		t.Errorf("channel page shows the URL as %q, want it masked", s)
	}
	testbrowser.Run(t, ctx, "send a test", chromedp.Click(chromedp.ID("send-test")), chromedp.WaitVisible(chromedp.ID("tested")))
	if s := text(t, ctx, "#tested"); !strings.Contains(s, "delivered") {
		t.Errorf("after the test: %q", s)
	}
	if s := text(t, ctx, "#deliveries tbody"); !strings.Contains(s, "Test message") || !strings.Contains(s, "delivered") {
		t.Errorf("delivery log: %q", s)
	}
	if n := len(rc.got()); n != 1 {
		t.Errorf("the receiver got %d messages, want 1", n)
	}
	screenshot(t, ctx, "channel.png")
	testbrowser.Run(t, ctx, "phone-sized channel page", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.ID("send-test")))
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil || wide {
		t.Errorf("the channel page scrolls sideways on a phone (%v)", err)
	}
	screenshot(t, ctx, "channel-phone.png")
	testbrowser.Run(t, ctx, "desktop again", chromedp.EmulateViewport(1280, 900))
	testbrowser.Run(t, ctx, "account page lists it", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(chromedp.ID("channels")))
	if s := text(t, ctx, "#channels tbody"); !strings.Contains(s, "Ops hook") || !strings.Contains(s, "OK") || strings.Contains(s, "secret-path-123456") {
		t.Errorf("account page channels: %q", s)
	}
	screenshot(t, ctx, "account-channels.png")
	testbrowser.Run(t, ctx, "back to the channel", chromedp.Click(chromedp.CSS(`#channels a[href="/account/channels/1"]`)), chromedp.WaitVisible(chromedp.ID("send-test")))

	testbrowser.Run(t, ctx, "open the delete dialog", chromedp.Click(chromedp.CSS(`a[data-dialog="dlg-delete"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("dlg-delete").open && document.activeElement.hasAttribute("data-close")`,
			chromedp.WithPollingTimeout(5*time.Second)))
	testbrowser.Run(t, ctx, "cancel it", chromedp.Click(chromedp.CSS(`#dlg-delete [data-close]`)),
		chromedp.Poll[chromedp.Void](`!document.getElementById("dlg-delete").open`, chromedp.WithPollingTimeout(5*time.Second)))
	testbrowser.Run(t, ctx, "delete it", chromedp.Click(chromedp.CSS(`a[data-dialog="dlg-delete"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#dlg-delete button.danger`)),
		chromedp.Click(chromedp.CSS(`#dlg-delete button.danger`)),
		chromedp.WaitVisible(chromedp.ID("channels")))
	if s := text(t, ctx, "#channels"); strings.Contains(s, "Ops hook") || !strings.Contains(s, "No channel yet") {
		t.Errorf("after delete, the account page lists %q", s)
	}
	// Chrome logs the 422 answer of the refused form as a failed load;
	// that one is intended. Anything else is an error.
	var errs []string
	for _, e := range consoleErrors() {
		if !strings.Contains(e, "status of 422") {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
