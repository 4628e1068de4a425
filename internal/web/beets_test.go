package web_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
)

func TestBeetPages(t *testing.T) { testdb.Each(t, testBeetPages) }

func testBeetPages(t *testing.T, engine string) {
	a := startApp(t, func(c *config.Config) { c.DatabaseURL = testdb.URL(t, engine) })
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")

	r := b.post("/beets", url.Values{"name": {""}, "timezone": {"UTC"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "is required") {
		t.Fatalf("beet without a name: %d\n%.500s", r.status, r.body)
	}
	r = b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"Mars/Base"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not an IANA time zone") || !strings.Contains(r.body, `value="Checkout"`) {
		t.Fatalf("beet with a bad zone: %d\n%.500s", r.status, r.body)
	}
	want(t, "create", b.post("/beets", url.Values{"name": {"Checkout <succeeded>"}, "timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/beets/1?created=1")
	want(t, "create another", b.post("/beets", url.Values{"name": {"Nightly backup"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/2?created=1")

	page := b.get("/beets/1?created=1").body
	token := tokenOf(t, b, 1)
	ingest := a.URL() + "/api/v1/beet/" + token
	// The page shows the URL and snippets masked, and copies them whole.
	if strings.Count(page, token) == 0 || !strings.Contains(page, "data-copy=\""+html.EscapeString(ingest)+"\"") {
		t.Errorf("no copy button with the ingestion URL %s", ingest)
	}
	if m := regexp.MustCompile(`<code class="secret" id="ingest-url"[^>]*>([^<]*)</code>`).FindStringSubmatch(page); m == nil || strings.Contains(m[1], token) || !strings.HasSuffix(m[1], token[len(token)-4:]) {
		t.Errorf("token is not masked: %v", m)
	}
	// Without script, Reveal is a link that loads the page with the URL
	// shown whole, and the copy buttons (script only) are hidden.
	if !strings.Contains(page, `href="/beets/1?reveal=1#send-h" role="button" data-reveal aria-pressed="false">Reveal</a>`) ||
		strings.Contains(page, "<button type=\"button\" class=\"primary\" data-copy=") {
		t.Errorf("the Reveal link or the hidden copy buttons are missing")
	}
	revealed := b.get("/beets/1?reveal=1").body
	if m := regexp.MustCompile(`<code class="secret" id="ingest-url"[^>]*>([^<]*)</code>`).FindStringSubmatch(revealed); m == nil || m[1] != ingest ||
		!strings.Contains(revealed, `aria-pressed="true">Hide</a>`) {
		t.Errorf("?reveal=1 does not show the URL whole: %v", m)
	}
	for _, s := range []string{"&lt;img src=", "fetch(", "navigator.sendBeacon(", "curl -fsS", "0 2 * * *", "Checkout &lt;succeeded&gt;", "Your beet is ready"} {
		if !strings.Contains(page, s) {
			t.Errorf("beet page lacks %q", s)
		}
	}

	// Events sent to the URL appear on the page, in the beet's time zone.
	get, _ := http.Get(a.URL() + "/api/v1/beet/" + token)
	get.Body.Close()
	post, _ := http.Post(a.URL()+"/api/v1/beet/"+token, "text/plain", strings.NewReader(`{"value": 5}`))
	post.Body.Close()
	waitFor(t, "two events on the page", func() bool {
		return strings.Count(b.get("/beets/1").body, "<td>GET</td>")+strings.Count(b.get("/beets/1").body, "<td>POST</td>") == 2
	})
	page = b.get("/beets/1").body
	if !strings.Contains(page, `<td class="num">5</td>`) || !strings.Contains(page, "EET</td>") && !strings.Contains(page, "EEST</td>") {
		t.Errorf("events lack the value or the Riga time:\n%s", page[strings.Index(page, "Recent events"):][:800])
	}

	// The chart counts them.
	var chart struct {
		Counts []int64 `json:"counts"`
		Times  []int64 `json:"times"`
		Flips  []struct{ To string }
	}
	cr := b.get("/beets/1/chart.json?range=7d")
	if err := json.Unmarshal([]byte(cr.body), &chart); err != nil || cr.status != 200 {
		t.Fatalf("chart: %d %v %s", cr.status, err, cr.body)
	}
	sum := int64(0)
	for _, c := range chart.Counts {
		sum += c
	}
	if sum != 2 || len(chart.Counts) != 168 || len(chart.Times) != 168 || chart.Counts[167] != 2 {
		t.Errorf("7 d chart: %d events in %d buckets (last %d), want 2 in 168, in the last", sum, len(chart.Counts), chart.Counts[len(chart.Counts)-1])
	}
	if len(chart.Flips) != 1 || chart.Flips[0].To != "learning" {
		t.Errorf("chart flips = %+v, want the first event's", chart.Flips)
	}
	want(t, "chart with a bad range", b.get("/beets/1/chart.json?range=1y"), http.StatusUnprocessableEntity, "")

	// The list: status in words, last event, 24 h count; search and filter.
	list := b.get("/").body
	for _, s := range []string{"Learning", "First event received", "just now", "2 / 24 h", "No event yet", "Nightly backup"} {
		if !strings.Contains(list, s) {
			t.Errorf("list lacks %q", s)
		}
	}
	if l := b.get("/?q=NIGHT").body; strings.Contains(l, "Checkout") || !strings.Contains(l, "Nightly backup") {
		t.Error("search by name does not filter")
	}
	if l := b.get("/?status=learning").body; !strings.Contains(l, "Checkout") || strings.Contains(l, "Nightly backup") {
		t.Error("status filter does not filter")
	}

	// Rotation: the page shows the new token, the old URL stops recording.
	// It says so once: a reload (or the self-refresh) no longer announces it.
	want(t, "rotate", b.post("/beets/1/rotate", url.Values{}), http.StatusSeeOther, "/beets/1#send")
	page = b.get("/beets/1").body
	fresh := tokenOf(t, b, 1)
	if fresh == token || !strings.Contains(page, `id="ingest-url" data-secret="`+a.URL()+"/api/v1/beet/"+fresh+`" data-masked="`) || !strings.Contains(page, "/"+fresh+"</code>") ||
		!strings.Contains(page, "The token is rotated") {
		t.Fatalf("after rotation the page does not show the new token %s", fresh)
	}
	if again := b.get("/beets/1").body; strings.Contains(again, "The token is rotated") || strings.Contains(again, "/"+fresh+"</code>") {
		t.Error("a reload after the rotation announces it again, or shows the token unmasked")
	}
	old, _ := http.Get(a.URL() + "/api/v1/beet/" + token)
	old.Body.Close()
	neu, _ := http.Get(a.URL() + "/api/v1/beet/" + fresh)
	neu.Body.Close()
	waitFor(t, "the new token's event", func() bool { return strings.Count(b.get("/beets/1").body, "<td>GET</td>") == 2 })
	if n := strings.Count(b.get("/beets/1").body, "<td>GET</td>"); n != 2 {
		t.Errorf("%d GET events after one old-token and one new-token GET, want 2 (the old token must not record)", n)
	}

	// Pause and resume.
	want(t, "pause", b.post("/beets/1/pause", url.Values{}), http.StatusSeeOther, "/beets/1")
	if p := b.get("/beets/1").body; !strings.Contains(p, "Resume alerts") || !strings.Contains(p, `badge big st-paused`) {
		t.Error("paused beet page does not say so")
	}
	want(t, "resume", b.post("/beets/1/resume", url.Values{}), http.StatusSeeOther, "/beets/1")

	// Detection settings: bad input is shown on the form; good input saved.
	r = b.post("/beets/1/detection", url.Values{"mode": {"period"}, "period_minutes": {"0.5"}, "grace_minutes": {"5"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Period (minutes) must be from 1 to 525600") || !strings.Contains(r.body, `value="0.5"`) {
		t.Errorf("period of 30 s: %d\n%.300s", r.status, r.body)
	}
	r = b.post("/beets/1/detection", url.Values{"mode": {"cron"}, "cron": {"0 25 * * *"}, "cron_timezone": {"UTC"}, "grace_minutes": {"5"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not a valid cron expression") {
		t.Errorf("bad cron: %d", r.status)
	}
	want(t, "save period", b.post("/beets/1/detection", url.Values{"mode": {"period"}, "period_minutes": {"60"}, "grace_minutes": {"5"}}),
		http.StatusSeeOther, "/beets/1#detection")
	if p := b.get("/beets/1").body; !strings.Contains(p, "Expects an event at least every 1 h, plus 5 min grace") {
		t.Error("saved detection not described on the page")
	}
	// Preview: the beet's 3 events replayed with a 1-minute period (their
	// silence since is seconds old, so no alert yet).
	r = b.get("/beets/1/backtest?mode=period&period_minutes=1&grace_minutes=0")
	if r.status != 200 || !strings.Contains(r.body, "Preview: 1 state change over 3 events") || !strings.Contains(r.body, "Expects an event at least every 1 min") {
		t.Errorf("backtest preview: %d\n%s", r.status, r.body[strings.Index(r.body, `id="det-h"`):])
	}
	if p := b.get("/beets/1").body; !strings.Contains(p, "every 1 h") {
		t.Error("the preview changed the saved settings")
	}

	// Settings, then delete.
	want(t, "rename", b.post("/beets/1/settings", url.Values{"name": {"Checkout OK"}, "timezone": {"UTC"}, "description": {"d"}}),
		http.StatusSeeOther, "/beets/1#settings")
	list = b.get("/").body
	if !strings.Contains(list, "Checkout OK") {
		t.Error("rename not shown in the list")
	}
	if !strings.Contains(list, `<label class="choice" hidden><input type="checkbox" data-check-all`) {
		t.Error(`"All on this page" is shown without script, where it does nothing`)
	}
	if strings.Contains(b.get("/beets/1").body, `name="resume_on_event" checked`) {
		t.Error("resume at the next ping is checked on a beet that never had it")
	}
	want(t, "resume on event", b.post("/beets/1/settings", url.Values{"name": {"Checkout OK"}, "timezone": {"UTC"}, "description": {"d"}, "resume_on_event": {"on"}}),
		http.StatusSeeOther, "/beets/1#settings")
	if !strings.Contains(b.get("/beets/1").body, `name="resume_on_event" checked`) {
		t.Error("resume at the next ping not kept: not checked after saving it")
	}
	if r := b.get("/beets/1/confirm/delete"); r.status != 200 || !strings.Contains(r.body, "cannot be undone") {
		t.Errorf("delete confirmation page: %d", r.status)
	}
	want(t, "delete", b.post("/beets/1/delete", url.Values{}), http.StatusSeeOther, "/")
	want(t, "deleted beet", b.get("/beets/1"), http.StatusNotFound, "")
}

// TestAccountsCannotSeeEachOther: every page and form of a beet answers
// 404 to another account's user, and changes nothing.
func TestAccountsCannotSeeEachOther(t *testing.T) { testdb.Each(t, testAccountsCannotSeeEachOther) }

func testAccountsCannotSeeEachOther(t *testing.T, engine string) {
	a := startApp(t, func(c *config.Config) { c.SignupOpen = true; c.DatabaseURL = testdb.URL(t, engine) })
	ada := newBrowser(t, a.URL())
	setup(t, ada, "ada@example.com")
	want(t, "ada's beet", ada.post("/beets", url.Values{"name": {"Ada's"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	token := tokenOf(t, ada, 1)

	eve := newBrowser(t, a.URL())
	want(t, "eve signs up", eve.post("/signup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}),
		http.StatusSeeOther, "/beets/new?welcome=1")
	if l := eve.get("/").body; strings.Contains(l, "Ada's") {
		t.Fatal("eve's list shows ada's beet")
	}
	for _, p := range []string{"/beets/1", "/beets/1/chart.json", "/beets/1/confirm/rotate", "/beets/1/backtest?mode=auto", "/beets/x", "/beets/99"} {
		if r := eve.get(p); r.status != 404 || strings.Contains(r.body, token) || strings.Contains(r.body, "Ada&#39;s") {
			t.Errorf("eve GET %s: %d", p, r.status)
		}
	}
	for _, p := range []string{"/beets/1/rotate", "/beets/1/pause", "/beets/1/delete", "/beets/1/settings", "/beets/1/detection"} {
		if r := eve.post(p, url.Values{"name": {"mine"}, "timezone": {"UTC"}, "mode": {"auto"}}); r.status != 404 {
			t.Errorf("eve POST %s: %d", p, r.status)
		}
	}
	// Ada's beet is as it was.
	page := ada.get("/beets/1").body
	if tokenOf(t, ada, 1) != token || !strings.Contains(page, "Ada&#39;s") || strings.Contains(page, "st-paused") {
		t.Error("eve changed ada's beet")
	}
	// API keys: eve cannot revoke ada's.
	// Creating one redirects (POST-redirect-GET); the next view shows it once.
	want(t, "create a key", ada.post("/account/keys", url.Values{"name": {"deploys"}}), http.StatusSeeOther, "/account?done=key#keys")
	r := ada.get("/account?done=key")
	key := regexp.MustCompile(`<code id="new-key">(bk_[0-9A-Za-z]+)</code>`).FindStringSubmatch(r.body)
	if r.status != 200 || key == nil || !strings.Contains(r.body, "deploys") {
		t.Fatalf("new key not shown after the redirect: %d", r.status)
	}
	// A refresh of that page shows it no more and makes no second key.
	again := ada.get("/account?done=key")
	if strings.Contains(again.body, key[1]) || strings.Contains(ada.get("/account").body, key[1]) {
		t.Error("the key is shown again after its creation")
	}
	if n := len(regexp.MustCompile(`/account/keys/\d+/revoke`).FindAllString(again.body, -1)); n != 1 {
		t.Errorf("%d keys after creating one and refreshing; want 1", n)
	}
	// The flash is for ada's session only: eve replaying ada's flash cookie sees nothing.
	if strings.Contains(eve.get("/account?done=key").body, "bk_") {
		t.Error("another session sees a new key")
	}
	id := regexp.MustCompile(`/account/keys/(\d+)/revoke`).FindStringSubmatch(ada.get("/account").body)[1]
	want(t, "eve revokes ada's key", eve.post("/account/keys/"+id+"/revoke", url.Values{}), http.StatusNotFound, "")
	req, _ := http.NewRequest("GET", a.URL()+"/api/v1/beets", nil)
	req.Header.Set("Authorization", "Bearer "+key[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ada's new key: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	want(t, "ada revokes it", ada.post("/account/keys/"+id+"/revoke", url.Values{}), http.StatusSeeOther, "/account?done=revoked#keys")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("revoked key: %d, want 401", resp.StatusCode)
	}

	// A read-only key from the form reads through the API and cannot write.
	want(t, "create a read-only key", ada.post("/account/keys", url.Values{"name": {"grafana"}, "access": {"read"}}), http.StatusSeeOther, "/account?done=key#keys")
	ro := regexp.MustCompile(`<code id="new-key">(bk_[0-9A-Za-z]+)</code>`).FindStringSubmatch(ada.get("/account?done=key").body)
	if ro == nil {
		t.Fatal("read-only key not shown after the redirect")
	}
	if !strings.Contains(ada.get("/account").body, "<td>Read-only</td>") {
		t.Error("the key list does not say the new key is read-only")
	}
	// The key list shows each key's prefix with one ellipsis (the stored
	// prefix, beet.Redact, ends in one already).
	if body := ada.get("/account").body; strings.Contains(body, "……") || !regexp.MustCompile(`<code>bk_[0-9A-Za-z]{4}…</code>`).MatchString(body) {
		t.Error("the key list does not show each key as bk_ and four characters with one ellipsis")
	}
	for _, c := range []struct {
		method, body string
		want         int
	}{{"GET", "", 200}, {"POST", `{"name": "x"}`, 403}} {
		req, _ := http.NewRequest(c.method, a.URL()+"/api/v1/beets", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+ro[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("read-only key from the dashboard, %s /api/v1/beets: %d, want %d", c.method, resp.StatusCode, c.want)
		}
	}
}

// TestRefusedSettingsKeepTheBeet: a refused settings form comes back with
// what was typed and the error, while the rest of the page (heading, the
// tables' zone, the chart's zone, the delete dialog) shows the beet as
// stored.
func TestRefusedSettingsKeepTheBeet(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Nightly backup"}, "timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/beets/1?created=1")
	get, err := http.Get(a.URL() + "/api/v1/beet/" + tokenOf(t, b, 1))
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	waitFor(t, "the event on the page", func() bool { return strings.Contains(b.get("/beets/1").body, "<td>GET</td>") })

	r := b.post("/beets/1/settings", url.Values{"name": {"Nightly backup"}, "description": {"typed"}, "timezone": {"Europe/Rigaa"}, "allow_bots": {"on"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "not an IANA time zone") {
		t.Fatalf("bad zone: %d\n%.500s", r.status, r.body)
	}
	for _, s := range []string{`id="s-tz" name="timezone" list="det-zones" required value="Europe/Rigaa"`, ">typed</textarea>", `name="allow_bots" checked`,
		`data-tz="Europe/Riga"`, "Received (Europe/Riga)", "Times in Europe/Riga."} {
		if !strings.Contains(r.body, s) {
			t.Errorf("the refused settings page lacks %q", s)
		}
	}
	before, _, _ := strings.Cut(r.body, `<section id="settings"`)
	if n := strings.Count(before, "Europe/Rigaa"); n != 0 || !regexp.MustCompile(`<td>[0-9-]+ [0-9:]+ EES?T</td>`).MatchString(r.body) {
		t.Errorf("the page names the refused zone %d times above the settings form or shows times outside Riga's zone:\n%s", n, r.body)
	}
	r = b.post("/beets/1/settings", url.Values{"name": {""}, "timezone": {"Europe/Riga"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "<h1>Nightly backup</h1>") || !strings.Contains(r.body, "Delete “Nightly backup”?") ||
		!strings.Contains(r.body, `id="s-name" name="name" required maxlength="200" value=""`) {
		t.Errorf("blank name: %d; want the stored name in the heading and dialog, the field empty", r.status)
	}
}
