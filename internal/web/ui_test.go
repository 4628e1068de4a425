package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
)

// The account's zone comes from the setup form (the browser's zone, sent
// by app.js) and new beets take it: from the dashboard's form and from the
// API, where a cron schedule without a zone runs in it.
func TestAccountZone(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	want(t, "setup with a zone", b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"},
		"password2": {"correct horse"}, "timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/beets/new?welcome=1")
	if !strings.Contains(b.get("/beets/new").body, `value="Europe/Riga"`) {
		t.Error("the new beet form does not offer the account's zone")
	}
	want(t, "create without a zone", b.post("/beets", url.Values{"name": {"No zone given"}}), http.StatusSeeOther, "/beets/1?created=1")
	if got, _ := a.Backend().Service.Beet(context.Background(), 1, 1); got.Timezone != "Europe/Riga" {
		t.Errorf("beet zone %q, want the account's Europe/Riga", got.Timezone)
	}
	_, key, err := a.Backend().Service.CreateAPIKey(context.Background(), 1, "test")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", a.URL()+"/api/v1/beets", strings.NewReader(`{"name": "Backup", "detection": {"mode": "cron", "cron": "0 2 * * *"}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Timezone  string         `json:"timezone"`
		Detection beet.Detection `json:"detection"`
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 201 || got.Timezone != "Europe/Riga" || got.Detection.Timezone != "Europe/Riga" {
		t.Fatalf("API cron beet without a zone: %d, zone %q, schedule zone %q; want 201 and Europe/Riga for both", resp.StatusCode, got.Timezone, got.Detection.Timezone)
	}
	// The account page changes it.
	want(t, "change the zone", b.post("/account/timezone", url.Values{"timezone": {"America/New_York"}}), http.StatusSeeOther, "/account?done=zone#zone")
	if r := b.post("/account/timezone", url.Values{"timezone": {"Mars/Base"}}); r.status != 422 || !strings.Contains(r.body, "not an IANA time zone") {
		t.Errorf("a bad zone: %d", r.status)
	}
	b.post("/beets", url.Values{"name": {"Later"}})
	if got, _ := a.Backend().Service.Beet(context.Background(), 1, 3); got.Timezone != "America/New_York" {
		t.Errorf("beet zone after the change %q", got.Timezone)
	}
}

// The detection form names the field it refuses, in the unit the field
// uses (minutes), not the API's seconds.
func TestDetectionFormUnits(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/beets", url.Values{"name": {"Job"}})
	r := b.post("/beets/1/detection", url.Values{"mode": {"period"}, "period_minutes": {"0.5"}, "grace_minutes": {"5"}})
	if r.status != 422 || !strings.Contains(r.body, "Period (minutes) must be from 1 to 525600") || strings.Contains(r.body, "31536000") ||
		!regexp.MustCompile(`id="period_minutes"[^>]*aria-invalid="true"`).MatchString(r.body) {
		t.Errorf("period of half a minute: %d\n%s", r.status, fieldError(r.body, "det-h"))
	}
	r = b.post("/beets/1/detection", url.Values{"mode": {"period"}, "period_minutes": {"60"}, "grace_minutes": {"ten"}})
	if r.status != 422 || !strings.Contains(r.body, "Grace (minutes): &#34;ten&#34; is not a number of minutes") {
		t.Errorf("grace of ten: %d", r.status)
	}
}

// Tags, the list's filters and sort, and pausing and resuming many beets.
func TestListTagsSortBulk(t *testing.T) { testdb.Each(t, testListTagsSortBulk) }

func testListTagsSortBulk(t *testing.T, engine string) {
	a := startApp(t, func(c *config.Config) { c.DatabaseURL = testdb.URL(t, engine) })
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	for _, n := range []string{"bravo", "Alpha", "charlie"} {
		b.post("/beets", url.Values{"name": {n}})
	}
	want(t, "tag", b.post("/beets/1/tags", url.Values{"tags": {"Prod, billing"}}), http.StatusSeeOther, "/beets/1#settings")
	b.post("/beets/3/tags", url.Values{"tags": {"prod"}})
	if r := b.post("/beets/2/tags", url.Values{"tags": {"no spaces!"}}); r.status != 422 || !strings.Contains(r.body, "may hold only letters") {
		t.Errorf("a bad tag: %d", r.status)
	}
	list := b.get("/?tag=prod").body
	if !strings.Contains(list, ">bravo<") || !strings.Contains(list, ">charlie<") || strings.Contains(list, ">Alpha<") || !strings.Contains(list, "#billing") {
		t.Errorf("tag filter: %s", list[strings.Index(list, `id="beet-list"`):])
	}
	names := func(page string) string {
		var out []string
		for _, m := range regexp.MustCompile(`class="name">([^<]+)<`).FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return strings.Join(out, ",")
	}
	if got := names(b.get("/?sort=name").body); got != "Alpha,bravo,charlie" {
		t.Errorf("sorted by name: %s", got)
	}
	// By tag: grouped by the first tag, the untagged last.
	if got := names(b.get("/?sort=tag").body); got != "bravo,charlie,Alpha" {
		t.Errorf("sorted by tag: %s", got)
	}
	// Bulk: pause two, back to the same filtered list, which says so.
	r := b.post("/beets/bulk", url.Values{"action": {"pause"}, "id": {"1", "3"}, "back": {"tag=prod&sort=name"}})
	want(t, "bulk pause", r, http.StatusSeeOther, "")
	if !strings.HasPrefix(r.location, "/?") || !strings.Contains(r.location, "tag=prod") || !strings.Contains(r.location, "done=paused") {
		t.Fatalf("bulk pause went to %q", r.location)
	}
	if p := b.get(r.location).body; !strings.Contains(p, "2 beets paused") {
		t.Error("no notice after the bulk pause")
	}
	if got := names(b.get("/?status=paused").body); got != "bravo,charlie" {
		t.Errorf("paused after bulk: %s", got)
	}
	if got := names(b.get("/?sort=status").body); got != "Alpha,bravo,charlie" {
		t.Errorf("worst first (new before paused): %s", got)
	}
	// Nothing checked: back to the same list, which says what to do.
	r = b.post("/beets/bulk", url.Values{"action": {"pause"}, "back": {"tag=prod&sort=name"}})
	if r.status != http.StatusSeeOther || !strings.Contains(r.location, "tag=prod") || !strings.Contains(b.get(r.location).body, "No beet was checked") {
		t.Errorf("bulk pause with nothing checked: %d %q", r.status, r.location)
	}
	b.post("/beets/bulk", url.Values{"action": {"resume"}, "id": {"1", "3"}})
	if got := names(b.get("/?status=paused").body); got != "" {
		t.Errorf("still paused after bulk resume: %s", got)
	}
	// Another account's beet in a bulk form is not found, and nothing changes.
	eve := newBrowser(t, a.URL())
	eve.post("/signup", url.Values{}) // closed: eve gets her account from the CLI-equivalent service call
	if _, _, err := a.Backend().Service.CreateAccount(context.Background(), "eve@example.com", "correct horse", beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	eve.post("/login", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}})
	if r := eve.post("/beets/bulk", url.Values{"action": {"pause"}, "id": {"2"}}); r.status != 404 {
		t.Errorf("eve pauses ada's beet in bulk: %d", r.status)
	}
	if got := names(b.get("/?status=paused").body); got != "" {
		t.Errorf("eve's bulk form paused %s", got)
	}
}

// Status badges: an SVG per beet and per tag at a URL nobody can guess;
// a forged or retired URL is a 404.
func TestBadges(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/beets", url.Values{"name": {"Nightly <backup>"}})
	b.post("/beets", url.Values{"name": {"Other"}})
	b.post("/beets/1/tags", url.Values{"tags": {"prod"}})
	b.post("/beets/1/pause", url.Values{})
	badgeRE := regexp.MustCompile(`data-copy="(http[^"]*/badge/([^"]+)\.svg)"`)
	m := badgeRE.FindStringSubmatch(b.get("/beets/1").body)
	if m == nil || len(m[2]) < 20 {
		t.Fatalf("no badge URL on the beet page: %v", m)
	}
	anon := newBrowser(t, a.URL())
	r := anon.get("/badge/" + m[2] + ".svg")
	if r.status != 200 || r.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(r.body, "Nightly &lt;backup&gt;") || !strings.Contains(r.body, "Paused") {
		t.Fatalf("beet badge: %d %s %.300s", r.status, r.header.Get("Content-Type"), r.body)
	}
	// The other beet's badge cannot be made from this one's.
	forged := strings.Replace(m[2], "b1-", "b2-", 1)
	if r := anon.get("/badge/" + forged + ".svg"); r.status != 404 {
		t.Errorf("forged badge: %d", r.status)
	}
	// Images load from the page's own host (CSP img-src 'self': the
	// dashboard may be opened at another host than the base URL's).
	acc := b.get("/account").body
	tag := regexp.MustCompile(`src="(/badge/(t[^"]+)\.svg)"`).FindStringSubmatch(acc)
	if tag == nil || !strings.Contains(acc, `data-copy="`+a.URL()+tag[1]+`"`) {
		t.Fatal("no tag badge on the account page, or its image is not root-relative beside a full URL to copy")
	}
	if r := anon.get("/badge/" + tag[2] + ".svg"); r.status != 200 || !strings.Contains(r.body, ">prod<") || !strings.Contains(r.body, "Paused") {
		t.Errorf("tag badge: %d %.300s", r.status, r.body)
	}
	want(t, "reset", b.post("/account/badges/reset", url.Values{}), http.StatusSeeOther, "/account?done=badges#badges")
	if r := anon.get("/badge/" + m[2] + ".svg"); r.status != 404 {
		t.Errorf("badge after reset: %d", r.status)
	}
}

// Changing a password needs the current one; it signs out the user's other
// sessions and keeps this one. Removing a user signs them out; nobody
// removes themselves.
func TestPasswordAndUsers(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	other := newBrowser(t, a.URL())
	want(t, "second session", other.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}}), http.StatusSeeOther, "/")
	r := b.post("/account/password", url.Values{"current": {"wrong horse"}, "new": {"new password"}, "new2": {"new password"}})
	if r.status != 422 || !strings.Contains(r.body, "is not your current password") || !regexp.MustCompile(`id="pw-current"[^>]*aria-invalid="true"`).MatchString(r.body) {
		t.Fatalf("wrong current password: %d", r.status)
	}
	if r := b.post("/account/password", url.Values{"current": {"correct horse"}, "new": {"new password"}, "new2": {"other password"}}); r.status != 422 || !strings.Contains(r.body, "differ") {
		t.Errorf("new passwords that differ: %d", r.status)
	}
	want(t, "change", b.post("/account/password", url.Values{"current": {"correct horse"}, "new": {"new password"}, "new2": {"new password"}}),
		http.StatusSeeOther, "/account?done=password#password")
	if r := b.get("/account"); r.status != 200 {
		t.Errorf("this session after the change: %d", r.status)
	}
	want(t, "the other session after the change", other.get("/account"), http.StatusSeeOther, "/login?next=%2Faccount")
	want(t, "the new password signs in", other.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"new password"}}), http.StatusSeeOther, "/")

	want(t, "add bob", b.post("/account/users", url.Values{"email": {"bob@example.com"}, "password": {"bobs password"}}), http.StatusSeeOther, "/account?done=user#users")
	bob := newBrowser(t, a.URL())
	bob.post("/login", url.Values{"email": {"bob@example.com"}, "password": {"bobs password"}})
	if r := bob.get("/account"); r.status != 200 {
		t.Fatalf("bob signed in: %d", r.status)
	}
	if r := bob.post("/account/users/2/remove", url.Values{}); r.status != 409 || !strings.Contains(r.body, "cannot remove yourself") {
		t.Errorf("bob removes himself: %d", r.status)
	}
	want(t, "ada removes bob", b.post("/account/users/2/remove", url.Values{}), http.StatusSeeOther, "/account?done=user-removed#users")
	want(t, "bob after removal", bob.get("/account"), http.StatusSeeOther, "/login?next=%2Faccount")
	if strings.Contains(b.get("/account").body, "bob@example.com") {
		t.Error("bob is still listed")
	}
}

// The delivery log says which beet a message was about, by name.
func TestDeliveryLogNamesBeet(t *testing.T) {
	rc := newReceiver(t)
	a := startApp(t, func(c *config.Config) { c.AllowPrivateTargets = true })
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "channel", b.post("/account/channels", url.Values{"kind": {"webhook"}, "name": {"Hook"}, "url": {rc.URL}}), http.StatusSeeOther, "")
	b.post("/beets", url.Values{"name": {"Payroll export"}})
	st := a.Backend().Store
	if err := st.SetBeetStatus(context.Background(), &beet.Flip{BeetID: 1, At: a.Backend().Service.Now(), From: beet.StatusNew, To: beet.StatusDown,
		Kind: beet.FlipSilence, Reason: "No event."}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery in the log", func() bool {
		return regexp.MustCompile(`<a href="/beets/1">Payroll export</a>`).MatchString(b.get("/account/channels/1").body)
	})
}

// Ten wrong current passwords in a row: the eleventh try is refused in
// the form itself (429), saying to wait, not on an error page.
func TestPasswordChangeThrottledInTheForm(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	for range 10 {
		b.post("/account/password", url.Values{"current": {"wrong horse"}, "new": {"new password"}, "new2": {"new password"}})
	}
	r := b.post("/account/password", url.Values{"current": {"correct horse"}, "new": {"new password"}, "new2": {"new password"}})
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, `id="pw-error">too many failed attempts; try again in`) ||
		!strings.Contains(r.body, `id="pw-current"`) {
		t.Fatalf("11th try: %d, want the account page with the wait in the password form", r.status)
	}
}

// Revoking an API key is asked first, as every other removal is: the
// account page's link opens a dialog, or without script a confirmation
// page whose form revokes it.
func TestKeyRevokeIsConfirmed(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "key", b.post("/account/keys", url.Values{"name": {"deploy"}}), http.StatusSeeOther, "/account?done=key#keys")
	acc := b.get("/account").body
	m := regexp.MustCompile(`href="(/account/keys/(\d+)/confirm/revoke)" data-dialog="dlg-key-(\d+)"`).FindStringSubmatch(acc)
	if m == nil || m[2] != m[3] || !strings.Contains(acc, `<form method="post" action="/account/keys/`+m[2]+`/revoke">`) {
		t.Fatalf("no confirmation link and dialog for the key")
	}
	page := b.get(m[1])
	if page.status != http.StatusOK || !strings.Contains(page.body, "Revoke this API key?") || !strings.Contains(page.body, `action="/account/keys/`+m[2]+`/revoke"`) {
		t.Fatalf("confirmation page: %d", page.status)
	}
	want(t, "revoke", b.post("/account/keys/"+m[2]+"/revoke", url.Values{}), http.StatusSeeOther, "/account?done=revoked#keys")
	if r := b.get(m[1]); r.status != http.StatusNotFound {
		t.Errorf("confirming a revoked key: %d, want 404", r.status)
	}
}

// TestKeyFormKeepsWhatWasTyped: a refused API key form comes back with the
// name and the access as chosen, so a retry does not make a read-write key
// where a read-only one was meant; the message names the key's name.
func TestKeyFormKeepsWhatWasTyped(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	name := strings.Repeat("k", 101)
	r := b.post("/account/keys", url.Values{"name": {name}, "access": {"read"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `value="`+name+`"`) || !strings.Contains(r.body, `<option value="read" selected>`) {
		t.Errorf("a refused key: %d; want the name and Read-only kept", r.status)
	}
	if got := fieldError(r.body, "key-name"); got != "The key's name is 101 characters long; at most 100 are allowed" {
		t.Errorf("the key's message: %q", got)
	}
}
