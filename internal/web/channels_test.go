package web_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
)

// receiver is a webhook endpoint on loopback that records what it got and
// answers with the status it is told.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	status atomic.Int32
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.status.Store(http.StatusOK)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, string(b))
		rc.mu.Unlock()
		w.WriteHeader(int(rc.status.Load()))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.bodies...)
}

// noInlineScript fails when a page carries script or style the CSP would
// refuse: a <script> without src, an on* handler or a style attribute.
func noInlineScript(t *testing.T, what, page string) {
	t.Helper()
	for _, m := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		if !strings.Contains(m, ` src="`) {
			t.Errorf("%s: inline script %s", what, m)
		}
	}
	if m := regexp.MustCompile(`(?i)\s(on[a-z]+|style)="`).FindString(page); m != "" {
		t.Errorf("%s: inline handler or style %q", what, m)
	}
}

// fieldError returns the error shown next to the field with the given id.
func fieldError(page, id string) string {
	m := regexp.MustCompile(`<p class="field-error" id="` + id + `-err">([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, `id="`+id+`"`) || !regexp.MustCompile(`id="`+id+`"[^>]*aria-invalid="true"`).MatchString(page) {
		return ""
	}
	return html.UnescapeString(m[1])
}

var testedRE = regexp.MustCompile(`^/account/channels/1\?tested=(\d+)#log$`)

func TestChannelPages(t *testing.T) { testdb.Each(t, testChannelPages) }

func testChannelPages(t *testing.T, engine string) {
	a := startApp(t, func(c *config.Config) { c.DatabaseURL = testdb.URL(t, engine); c.AllowPrivateTargets = true })
	rc := newReceiver(t)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")

	acc := b.get("/account")
	if !strings.Contains(acc.body, "No channel yet") || !strings.Contains(acc.body, `href="/account/channels/new"`) {
		t.Fatalf("account page has no channels section:\n%s", acc.body)
	}
	want(t, "channels", b.get("/account/channels"), http.StatusSeeOther, "/account#channels")
	form := b.get("/account/channels/new")
	if form.status != 200 {
		t.Fatalf("new channel form: %d", form.status)
	}
	for _, k := range beet.ChannelKinds {
		if !strings.Contains(form.body, `<option value="`+string(k)+`"`) {
			t.Errorf("the kind select lacks %s", k)
		}
	}
	noInlineScript(t, "new channel form", form.body)
	if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}

	// Bad input: the service's error is shown next to its field, with what
	// was typed kept (but no secret written back).
	hookURL := rc.URL + "/hooks/T0123/B0456/abcdefghijklmnop"
	secret := "whsec_do_not_show_me_0123456789"
	bad := []struct {
		form     url.Values
		field    string
		contains string
	}{
		{url.Values{"kind": {"webhook"}, "name": {"Ops hook"}, "url": {"ftp://example.com/x"}, "secret": {secret}}, "c-url", "must be an absolute http:// or https:// URL"},
		{url.Values{"kind": {"webhook"}, "name": {""}, "url": {hookURL}}, "c-name", "required"},
		{url.Values{"kind": {"slack"}, "name": {"Ops hook"}, "url": {hookURL}, "secret": {secret}}, "c-secret", "is not a setting of a slack channel"},
		{url.Values{"kind": {"email"}, "name": {"Ops mail"}, "to": {"not an address"}}, "c-to", "is not an email address"},
		{url.Values{"kind": {"pagerduty"}, "name": {"PD"}, "routing_key": {"short"}}, "c-rk", "32-character"},
		{url.Values{"kind": {"pigeon"}, "name": {"Coo"}}, "c-kind", "is not a channel kind"},
		{url.Values{"kind": {"email"}, "name": {"Ops mail"}, "to": {"ops@example.com"}}, "c-kind", "BEET_SMTP_URL"},
		{url.Values{"kind": {"webhook"}, "name": {"Ops hook"}, "url": {hookURL}, "reminder_every_seconds": {"60"}}, "c-rem", "must be 0 (off) or from 900"},
	}
	for _, c := range bad {
		r := b.post("/account/channels", c.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%v: %d, want 422", c.form, r.status)
		}
		if got := fieldError(r.body, c.field); !strings.Contains(got, c.contains) {
			t.Errorf("%v: error next to %s = %q, want %q\n%s", c.form, c.field, got, c.contains, r.body)
		}
		if strings.Contains(r.body, secret) {
			t.Errorf("%v: the secret is written back into the form", c.form)
		}
		if name := c.form.Get("name"); name != "" && !strings.Contains(r.body, `value="`+name+`"`) {
			t.Errorf("%v: the name was lost", c.form)
		}
		noInlineScript(t, "form with an error", r.body)
	}
	if strings.Contains(b.get("/account").body, "Ops hook") {
		t.Fatal("a refused channel was created")
	}

	// A webhook to the receiver: created, listed masked.
	want(t, "create", b.post("/account/channels", url.Values{"kind": {"webhook"}, "name": {"Ops hook"}, "url": {hookURL},
		"secret": {secret}, "reminder_every_seconds": {"3600"}}), http.StatusSeeOther, "/account/channels/1?created=1")
	masked := beet.MaskURL(hookURL)
	for path, page := range map[string]string{"/account": b.get("/account").body, "/account/channels/1": b.get("/account/channels/1?created=1").body} {
		if !strings.Contains(page, "Ops hook") || !strings.Contains(page, html.EscapeString(masked)) {
			t.Errorf("%s does not show the channel with its masked URL %s", path, masked)
		}
		if strings.Contains(page, "abcdefghijklmnop") || strings.Contains(page, secret) || strings.Contains(page, "B0456") {
			t.Errorf("%s shows a secret whole", path)
		}
		noInlineScript(t, path, page)
	}
	page := b.get("/account/channels/1").body
	for _, s := range []string{"Webhook", "Every 1 h", "No message yet", `id="state">OK`, "Send a test message"} {
		if !strings.Contains(page, s) {
			t.Errorf("channel page lacks %q", s)
		}
	}

	// A beet notifies every channel at first; its page chooses.
	want(t, "beet", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	checked := regexp.MustCompile(`<input type="checkbox" name="channel" value="1" checked>`)
	if p := b.get("/beets/1").body; !checked.MatchString(p) || strings.Contains(p, `id="no-channels"`) {
		t.Error("the new beet does not notify the channel")
	}
	want(t, "uncheck", b.post("/beets/1/channels", url.Values{}), http.StatusSeeOther, "/beets/1#alerts")
	if p := b.get("/beets/1").body; checked.MatchString(p) || !strings.Contains(p, `id="no-channels"`) {
		t.Error("after unchecking, the beet page still shows the channel checked")
	}
	want(t, "check", b.post("/beets/1/channels", url.Values{"channel": {"1"}}), http.StatusSeeOther, "/beets/1#alerts")
	if p := b.get("/beets/1").body; !checked.MatchString(p) {
		t.Error("after checking, the channel is not checked")
	}
	want(t, "a channel that is not there", b.post("/beets/1/channels", url.Values{"channel": {"99"}}), http.StatusNotFound, "")
	if p := b.get("/beets/1").body; !checked.MatchString(p) {
		t.Error("a refused selection changed the beet's channels")
	}

	// Test: the receiver gets it, the page shows the delivery.
	r := b.post("/account/channels/1/test", url.Values{})
	m := testedRE.FindStringSubmatch(r.location)
	if r.status != http.StatusSeeOther || m == nil {
		t.Fatalf("test: %d %q", r.status, r.location)
	}
	if got := rc.got(); len(got) != 1 || !strings.Contains(got[0], `"event":"test"`) {
		t.Fatalf("the receiver got %q, want one test message", got)
	}
	page = b.get(strings.TrimSuffix(r.location, "#log")).body
	if !regexp.MustCompile(`The test message was delivered in (under 1 ms|[0-9.]+ (ms|s))\.`).MatchString(page) {
		t.Errorf("no delivered notice:\n%s", page[strings.Index(page, `id="log"`):])
	}
	row := regexp.MustCompile(`(?s)<tr id="d-` + m[1] + `">(.*?)</tr>`).FindStringSubmatch(page)
	if row == nil || !strings.Contains(row[1], "Test message") || !strings.Contains(row[1], "dl-delivered") ||
		!strings.Contains(row[1], `<td class="num">1</td>`) || !regexp.MustCompile(`[0-9.]+ (ms|s)</td>`).MatchString(row[1]) ||
		!strings.Contains(row[1], " UTC</td>") {
		t.Errorf("delivery log row: %v", row)
	}
	// Times are in the account's zone once it has one.
	acct := func(tz string) {
		t.Helper()
		if r := b.post("/account/timezone", url.Values{"timezone": {tz}}); r.status != http.StatusSeeOther {
			t.Fatalf("account zone %s: %d", tz, r.status)
		}
	}
	acct("Europe/Riga")
	if page := b.get(strings.TrimSuffix(r.location, "#log")).body; !regexp.MustCompile(`<td>\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? EES?T</td>`).MatchString(page) {
		t.Errorf("the delivery log is not in the account's zone:\n%s", between(page, `id="log"`, "</table>"))
	}
	acct("UTC")

	// A receiver that fails: the page says so, with the (masked) error and
	// the next attempt.
	rc.status.Store(http.StatusInternalServerError)
	r = b.post("/account/channels/1/test", url.Values{})
	if testedRE.FindStringSubmatch(r.location) == nil {
		t.Fatalf("second test: %d %q", r.status, r.location)
	}
	page = b.get(strings.TrimSuffix(r.location, "#log")).body
	if !strings.Contains(page, "The test message failed:") || !strings.Contains(page, "HTTP 500") || !strings.Contains(page, "Beet tries again at") {
		t.Errorf("no failure notice:\n%s", page[strings.Index(page, `id="log"`):])
	}
	if strings.Contains(page, "abcdefghijklmnop") {
		t.Error("the error shows the URL whole")
	}
	if n := strings.Count(page, `<tr id="d-`); n != 2 {
		t.Errorf("%d rows in the log, want 2", n)
	}
	if len(rc.got()) != 2 {
		t.Errorf("the receiver got %d messages, want 2", len(rc.got()))
	}

	// A refusal for good marks the channel failing, on its page and the
	// account page; the next success clears it.
	rc.status.Store(http.StatusNotFound)
	r = b.post("/account/channels/1/test", url.Values{})
	page = b.get(strings.TrimSuffix(r.location, "#log")).body
	if !strings.Contains(page, "The test message was not delivered (failed)") || !strings.Contains(page, `id="state">Failing`) ||
		!regexp.MustCompile(`Failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: POST [^<]*HTTP 404`).MatchString(page) {
		t.Errorf("a 404 does not show the channel failing:\n%s", page)
	}
	if p := b.get("/account").body; !strings.Contains(p, `<span class="badge st-down">Failing</span>`) {
		t.Error("the account page does not show the channel failing")
	}
	rc.status.Store(http.StatusOK)
	b.post("/account/channels/1/test", url.Values{})
	if p := b.get("/account/channels/1").body; !strings.Contains(p, `id="state">OK`) {
		t.Error("a delivered test does not clear the failing state")
	}

	// Settings: empty settings keep the stored ones; a bad URL is marked.
	want(t, "rename", b.post("/account/channels/1/settings", url.Values{"name": {"Ops hook 2"}, "url": {""}, "secret": {""},
		"reminder_every_seconds": {"900"}}), http.StatusSeeOther, "/account/channels/1?saved=1#settings")
	page = b.get("/account/channels/1?saved=1").body
	if !strings.Contains(page, "Ops hook 2") || !strings.Contains(page, "Every 15 min") || !strings.Contains(page, html.EscapeString(masked)) ||
		!strings.Contains(page, "The settings are saved") || !strings.Contains(page, "(set; never shown)") {
		t.Errorf("after renaming:\n%s", page)
	}
	r = b.post("/account/channels/1/settings", url.Values{"name": {"Ops hook 3"}, "url": {"ftp://example.com/"}, "reminder_every_seconds": {"900"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.body, "c-url"), "absolute http") || !strings.Contains(r.body, `value="Ops hook 3"`) ||
		!strings.Contains(r.body, "<details class=\"edit\" open>") {
		t.Errorf("bad URL in settings: %d %q", r.status, fieldError(r.body, "c-url"))
	}
	noInlineScript(t, "settings with an error", r.body)
	moved := rc.URL + "/hooks/T0123/B0456/qrstuvwxyz012345"
	want(t, "new URL", b.post("/account/channels/1/settings", url.Values{"name": {"Ops hook 2"}, "url": {moved}, "reminder_every_seconds": {"900"}}),
		http.StatusSeeOther, "/account/channels/1?saved=1#settings")
	if page = b.get("/account/channels/1").body; !strings.Contains(page, html.EscapeString(beet.MaskURL(moved))) || strings.Contains(page, "qrstuvwxyz012345") {
		t.Error("the new URL is not shown masked")
	}
	// A reminder set through the API that the select does not offer is
	// kept as the selected choice, so saving the form keeps it.
	two := 2 * time.Hour
	if _, err := a.Backend().Service.UpdateChannel(context.Background(), 1, 1, beet.ChannelUpdate{ReminderEvery: &two}); err != nil {
		t.Fatal(err)
	}
	if page = b.get("/account/channels/1").body; !strings.Contains(page, `<option value="7200" selected>Every 2 h</option>`) {
		t.Error("a 2 h reminder is not offered as selected")
	}

	// Delete: a confirmation page (without script), then gone.
	c := b.get("/account/channels/1/confirm/delete")
	if c.status != 200 || !strings.Contains(c.body, "cannot be undone") || !strings.Contains(c.body, `action="/account/channels/1/delete"`) ||
		!strings.Contains(c.body, "Ops hook 2") {
		t.Fatalf("delete confirmation: %d\n%s", c.status, c.body)
	}
	want(t, "delete", b.post("/account/channels/1/delete", url.Values{}), http.StatusSeeOther, "/account?done=channel-deleted#channels")
	want(t, "deleted channel", b.get("/account/channels/1"), http.StatusNotFound, "")
	if p := b.get("/account?done=channel-deleted").body; strings.Contains(p, "Ops hook") || !strings.Contains(p, "The channel is deleted") {
		t.Error("the account page still lists the deleted channel")
	}
}

// TestChannelsOfAnotherAccount: every channel page and form answers 404 to
// another account's user, shows nothing of the channel, and changes
// nothing.
func TestChannelsOfAnotherAccount(t *testing.T) {
	a := startApp(t, func(c *config.Config) { c.SignupOpen = true; c.AllowPrivateTargets = true })
	rc := newReceiver(t)
	ada := newBrowser(t, a.URL())
	setup(t, ada, "ada@example.com")
	hookURL := rc.URL + "/hooks/ada-secret-path"
	want(t, "ada's channel", ada.post("/account/channels", url.Values{"kind": {"webhook"}, "name": {"Ada's hook"}, "url": {hookURL}}),
		http.StatusSeeOther, "/account/channels/1?created=1")
	want(t, "ada tests it", ada.post("/account/channels/1/test", url.Values{}), http.StatusSeeOther, "")

	eve := newBrowser(t, a.URL())
	want(t, "eve signs up", eve.post("/signup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}),
		http.StatusSeeOther, "/beets/new?welcome=1")
	if p := eve.get("/account").body; strings.Contains(p, "Ada&#39;s hook") || !strings.Contains(p, "No channel yet") {
		t.Error("eve's account page lists ada's channel")
	}
	for _, p := range []string{"/account/channels/1", "/account/channels/1?tested=1", "/account/channels/1/confirm/delete", "/account/channels/x", "/account/channels/99"} {
		if r := eve.get(p); r.status != 404 || strings.Contains(r.body, "Ada&#39;s") || strings.Contains(r.body, "hooks/") {
			t.Errorf("eve GET %s: %d", p, r.status)
		}
	}
	for _, p := range []string{"/account/channels/1/test", "/account/channels/1/delete", "/account/channels/1/settings", "/account/channels/99/test"} {
		if r := eve.post(p, url.Values{"name": {"eve's now"}, "url": {rc.URL + "/eve"}}); r.status != 404 {
			t.Errorf("eve POST %s: %d", p, r.status)
		}
	}
	if n := len(rc.got()); n != 1 {
		t.Errorf("the receiver got %d messages, want only ada's test", n)
	}
	page := ada.get("/account/channels/1").body
	if !strings.Contains(page, "Ada&#39;s hook") || strings.Count(page, `<tr id="d-`) != 1 {
		t.Error("eve changed ada's channel or its log")
	}
	// Nor can eve point her beet at ada's channel, or change ada's beet's.
	want(t, "ada's beet", ada.post("/beets", url.Values{"name": {"Ada's beet"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	want(t, "eve's beet", eve.post("/beets", url.Values{"name": {"Eve's beet"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/2?created=1")
	want(t, "eve takes ada's channel", eve.post("/beets/2/channels", url.Values{"channel": {"1"}}), http.StatusNotFound, "")
	want(t, "eve silences ada's beet", eve.post("/beets/1/channels", url.Values{}), http.StatusNotFound, "")
	if p := eve.get("/beets/2").body; strings.Contains(p, "Ada&#39;s hook") || strings.Contains(p, `name="channel"`) {
		t.Error("eve's beet page offers ada's channel")
	}
	if p := ada.get("/beets/1").body; !strings.Contains(p, `<input type="checkbox" name="channel" value="1" checked>`) {
		t.Error("ada's beet lost its channel")
	}
}

func TestMaintenancePages(t *testing.T) {
	a := startApp(t, func(c *config.Config) { c.SignupOpen = true })
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "beet", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	if p := b.get("/beets/1").body; !strings.Contains(p, `href="/account/maintenance/new?beet=1"`) {
		t.Error("the beet page has no link to add a window for it")
	}
	if p := b.get("/account").body; !strings.Contains(p, "No maintenance window") || !strings.Contains(p, `href="/account/maintenance/new"`) {
		t.Fatal("no maintenance section on the account page")
	}
	form := b.get("/account/maintenance/new?beet=1")
	if form.status != 200 || !strings.Contains(form.body, `<option value="1" selected>Checkout</option>`) {
		t.Fatalf("new window form: %d\n%s", form.status, form.body)
	}
	noInlineScript(t, "maintenance form", form.body)

	bad := []struct {
		form            url.Values
		field, contains string
	}{
		{url.Values{"mode": {"once"}, "starts_at": {"2030-06-01T22:00"}, "ends_at": {"2030-06-01T21:00"}, "timezone": {"UTC"}}, "w-end", "must be after the start"},
		{url.Values{"mode": {"once"}, "starts_at": {"tomorrow"}, "ends_at": {"2030-06-01T21:00"}, "timezone": {"UTC"}}, "w-start", "not a date and time"},
		{url.Values{"mode": {"once"}, "starts_at": {"2030-06-01T20:00"}, "ends_at": {"2030-06-01T21:00"}, "timezone": {"Mars/Base"}}, "w-tz", "Mars/Base"},
		{url.Values{"mode": {"repeat"}, "cron": {"0 25 * * *"}, "duration_minutes": {"60"}, "timezone": {"UTC"}}, "w-cron", "not a valid cron expression"},
		{url.Values{"mode": {"repeat"}, "cron": {"0 2 * * 0"}, "duration_minutes": {"0.5"}, "timezone": {"UTC"}}, "w-min", "must be from 60"},
		{url.Values{"mode": {"repeat"}, "cron": {"0 2 * * 0"}, "duration_minutes": {"60"}, "timezone": {"UTC"}, "beet_id": {"99"}}, "w-beet", "not found"},
	}
	for _, c := range bad {
		r := b.post("/account/maintenance", c.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%v: %d, want 422\n%.400s", c.form, r.status, r.body)
		}
		if got := fieldError(r.body, c.field); !strings.Contains(got, c.contains) {
			t.Errorf("%v: error next to %s = %q, want %q", c.form, c.field, got, c.contains)
		}
	}
	if p := b.get("/account").body; !strings.Contains(p, "No maintenance window") {
		t.Fatal("a refused window was created")
	}

	want(t, "once, for the beet", b.post("/account/maintenance", url.Values{"mode": {"once"}, "beet_id": {"1"}, "starts_at": {"2030-06-01T22:00"},
		"ends_at": {"2030-06-02T01:30"}, "timezone": {"Europe/Riga"}, "note": {"db upgrade"}}), http.StatusSeeOther, "/account?done=window#maintenance")
	want(t, "repeating, for all", b.post("/account/maintenance", url.Values{"mode": {"repeat"}, "cron": {"0 2 * * 0"}, "duration_minutes": {"90"},
		"timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/account?done=window#maintenance")
	p := b.get("/account").body
	for _, s := range []string{"From 2030-06-01 19:00 to 2030-06-01 22:30 UTC", "db upgrade", "<td>Checkout</td>",
		"At 0 2 * * 0 (cron, Europe/Riga) for 1 h 30 min", "<td>Every beet</td>"} {
		if !strings.Contains(p, s) {
			t.Errorf("account page lacks %q", s)
		}
	}
	noInlineScript(t, "account page", p)

	eve := newBrowser(t, a.URL())
	want(t, "eve signs up", eve.post("/signup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}),
		http.StatusSeeOther, "/beets/new?welcome=1")
	if p := eve.get("/account").body; strings.Contains(p, "db upgrade") || !strings.Contains(p, "No maintenance window") {
		t.Error("eve sees ada's windows")
	}
	want(t, "eve's confirm page", eve.get("/account/maintenance/1/confirm/delete"), http.StatusNotFound, "")
	want(t, "eve deletes", eve.post("/account/maintenance/1/delete", url.Values{}), http.StatusNotFound, "")
	r := eve.post("/account/maintenance", url.Values{"mode": {"repeat"}, "cron": {"0 2 * * 0"}, "duration_minutes": {"60"}, "timezone": {"UTC"}, "beet_id": {"1"}})
	if r.status != http.StatusUnprocessableEntity || fieldError(r.body, "w-beet") == "" || strings.Contains(r.body, "Checkout") {
		t.Errorf("eve's window on ada's beet: %d", r.status)
	}
	if p := eve.get("/account").body; !strings.Contains(p, "No maintenance window") {
		t.Error("eve's refused window was created")
	}

	c := b.get("/account/maintenance/1/confirm/delete")
	if c.status != 200 || !strings.Contains(c.body, "cannot be undone") || !strings.Contains(c.body, `action="/account/maintenance/1/delete"`) {
		t.Fatalf("delete confirmation: %d", c.status)
	}
	want(t, "delete", b.post("/account/maintenance/1/delete", url.Values{}), http.StatusSeeOther, "/account?done=window-deleted#maintenance")
	if p := b.get("/account").body; strings.Contains(p, "db upgrade") || !strings.Contains(p, "Every beet") {
		t.Error("after delete, the account page shows the wrong windows")
	}
}

// Without BEET_ALLOW_PRIVATE_TARGETS, a channel to a loopback address is
// refused on the form, next to the URL.
func TestChannelPrivateTargetRefused(t *testing.T) {
	a := startApp(t, nil)
	rc := newReceiver(t)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	r := b.post("/account/channels", url.Values{"kind": {"webhook"}, "name": {"Local"}, "url": {rc.URL + "/hook"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.body, "c-url"), "private, loopback or link-local") {
		t.Fatalf("loopback webhook: %d %q", r.status, fieldError(r.body, "c-url"))
	}
	if p := b.get("/account").body; !strings.Contains(p, "No channel yet") {
		t.Error("the refused channel was created")
	}
}

// TestServiceChannelPages: the new-channel form explains every service
// URL with an example; a Gotify channel made through it delivers to a
// Gotify on loopback (a 500 first, then the message), and no page shows
// the URL's token, not even the form that refused a URL.
func TestServiceChannelPages(t *testing.T) {
	a := startApp(t, func(c *config.Config) { c.AllowPrivateTargets = true })
	const token = "Awebsecret0001x"
	var mu sync.Mutex
	var messages []string
	answered500 := false
	gotify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/message" || r.URL.Query().Get("token") != token {
			http.Error(w, `{"error":"Unauthorized","errorCode":401}`, http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !answered500 {
			answered500 = true
			http.Error(w, "failed to handle "+r.URL.String(), http.StatusInternalServerError)
			return
		}
		messages = append(messages, string(body))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":1,"appid":1,"message":"m","title":"t","priority":0,"date":"2026-01-01T00:00:00Z"}`)
	}))
	t.Cleanup(gotify.Close)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")

	form := b.get("/account/channels/new").body
	for _, k := range beet.ServiceURLKinds {
		if !strings.Contains(form, `data-kinds="`+string(k)+`"`) || !strings.Contains(form, html.EscapeString(beet.ServiceURLExample(k))) {
			t.Errorf("the form does not explain the %s URL with its example", k)
		}
	}
	noInlineScript(t, "new channel form", form)

	// A URL the library refuses: the reason is shown, the URL is not.
	r := b.post("/account/channels", url.Values{"kind": {"gotify"}, "name": {"Gotify"}, "url": {"gotify://gotify.example.com/Bwebsecret0001x"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.body, "c-url"), "15 characters") || strings.Contains(r.body, "websecret") {
		t.Fatalf("a bad Gotify token: %d %q (the page must not repeat the token)", r.status, fieldError(r.body, "c-url"))
	}

	u := "gotify://" + gotify.Listener.Addr().String() + "/" + token + "?disabletls=yes"
	want(t, "create", b.post("/account/channels", url.Values{"kind": {"gotify"}, "name": {"Gotify"}, "url": {u}}),
		http.StatusSeeOther, "/account/channels/1?created=1")
	r = b.post("/account/channels/1/test", url.Values{})
	page := b.get(strings.TrimSuffix(r.location, "#log")).body
	if !strings.Contains(page, "The test message failed:") || !strings.Contains(page, "HTTP 500") {
		t.Errorf("no failure notice:\n%s", page)
	}
	r = b.post("/account/channels/1/test", url.Values{})
	page = b.get(strings.TrimSuffix(r.location, "#log")).body
	if !regexp.MustCompile(`The test message was delivered in (under 1 ms|[0-9.]+ (ms|s))\.`).MatchString(page) {
		t.Errorf("no delivered notice:\n%s", page)
	}
	mu.Lock()
	if len(messages) == 0 || !strings.Contains(messages[0], "Test message from Beet") {
		t.Errorf("Gotify got %q", messages)
	}
	mu.Unlock()
	for path, p := range map[string]string{"channel": page, "account": b.get("/account").body, "settings error": b.post("/account/channels/1/settings",
		url.Values{"name": {"Gotify"}, "url": {"gotify://gotify.example.com/Bwebsecret0001x"}, "reminder_every_seconds": {"0"}}).body} {
		if strings.Contains(p, token) || strings.Contains(p, "websecret") {
			t.Errorf("the %s page shows the token", path)
		}
		if !strings.Contains(p, "gotify://127.0.0.1:") {
			t.Errorf("the %s page does not show the masked URL", path)
		}
	}
}

// A new window's times are typed in its beet's zone, or the account's.
func TestNewWindowZone(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/account/timezone", url.Values{"timezone": {"America/New_York"}})
	want(t, "beet", b.post("/beets", url.Values{"name": {"Reports"}, "timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/beets/1?created=1")
	for path, zone := range map[string]string{"/account/maintenance/new?beet=1": "Europe/Riga", "/account/maintenance/new": "America/New_York"} {
		page := b.get(path).body
		if !regexp.MustCompile(`<option value="` + zone + `"[^>]*selected|name="timezone"[^>]*value="` + zone + `"`).MatchString(page) {
			t.Errorf("%s: the zone is not %s:\n%s", path, zone, between(page, `name="timezone"`, "</select>"))
		}
	}
}

// TestMaintenanceWindowsSayWhen: the account's list says whether each
// window is open now, scheduled (a later one, or a repeating one between
// its openings) or over, rather than "Closed" for both.
func TestMaintenanceWindowsSayWhen(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	for _, f := range []url.Values{
		{"mode": {"once"}, "starts_at": {"2020-06-01T22:00"}, "ends_at": {"2020-06-02T01:30"}, "timezone": {"UTC"}},
		{"mode": {"once"}, "starts_at": {"2090-06-01T22:00"}, "ends_at": {"2090-06-02T01:30"}, "timezone": {"UTC"}},
		{"mode": {"once"}, "starts_at": {"2020-06-01T22:00"}, "ends_at": {"2090-06-02T01:30"}, "timezone": {"UTC"}},
	} {
		want(t, "window", b.post("/account/maintenance", f), http.StatusSeeOther, "/account?done=window#maintenance")
	}
	p := b.get("/account").body
	for id, state := range map[string]string{"1": "Ended", "2": "Scheduled", "3": "Open"} {
		m := regexp.MustCompile(`(?s)<tr id="mw-` + id + `">.*?<td>(?:<span[^>]*>)?(Open|Ended|Scheduled|Closed)</span></td>`).FindStringSubmatch(p)
		if m == nil || m[1] != state {
			t.Errorf("window %s says %v, want %s", id, m, state)
		}
	}
}
