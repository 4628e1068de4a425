package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// TestStatusPagesDashboard: a person creates a status page from the
// dashboard (a bad field is shown next to it, with what was typed), edits
// it, posts, resolves and deletes notices, and deletes the page; the
// public page follows each step at once, escapes what was typed, and
// shows no token.
func TestStatusPagesDashboard(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/beets", url.Values{"name": {"Checkout API"}})
	b.post("/beets", url.Values{"name": {"Invoice run"}})
	b.post("/beets/1/tags", url.Values{"tags": {"prod"}})
	token := tokenOf(t, b, 1)

	if r := b.get("/account"); !strings.Contains(r.body, `href="/account/status-pages"`) {
		t.Error("the account page has no link to status pages")
	}
	r := b.post("/account/status-pages", url.Values{"title": {"Acme"}, "slug": {"Acme!"}, "tags": {"prod"}})
	if r.status != 422 || !strings.Contains(r.body, `id="sp-slug-err"`) || !strings.Contains(r.body, `value="Acme!"`) {
		t.Fatalf("a bad slug: %d, want 422 with the field's error and the typed value", r.status)
	}
	if r := b.post("/account/status-pages", url.Values{"title": {"Acme"}, "slug": {"acme"}}); r.status != 422 || !strings.Contains(r.body, `id="sp-tags-err"`) {
		t.Fatalf("a page that shows nothing: %d", r.status)
	}
	want(t, "create", b.post("/account/status-pages", url.Values{"title": {"Acme <b>status</b>"}, "slug": {"acme"}, "tags": {"prod"}}),
		http.StatusSeeOther, "/account/status-pages/1?done=created")
	page := b.get("/account/status-pages/1?done=created").body
	if !strings.Contains(page, "The status page is live") || !strings.Contains(page, `href="/status/acme"`) {
		t.Errorf("the page's dashboard lacks its public address: %s", page)
	}
	if r := b.get("/account/status-pages"); !strings.Contains(r.body, "/status/acme") || !strings.Contains(r.body, "tags prod") {
		t.Error("the list lacks the page")
	}

	pub := b.get("/status/acme")
	if pub.status != 200 || !strings.Contains(pub.body, "Checkout API") || strings.Contains(pub.body, "Invoice run") ||
		!strings.Contains(pub.body, "Acme &lt;b&gt;status&lt;/b&gt;") || strings.Contains(pub.body, token) {
		t.Fatalf("public page: %d: want the prod beet only, the title as text, no token", pub.status)
	}

	want(t, "edit", b.post("/account/status-pages/1", url.Values{"title": {"Acme"}, "slug": {"acme"}, "tags": {"prod"}, "beet_ids": {"2"}}),
		http.StatusSeeOther, "/account/status-pages/1?done=saved")
	if pub := b.get("/status/acme").body; !strings.Contains(pub, "Invoice run") {
		t.Error("the beet chosen by ID is not on the public page")
	}
	if r := b.post("/account/status-pages/1", url.Values{"title": {"Acme"}, "slug": {"acme"}, "tags": {"prod"}, "beet_ids": {"999"}}); r.status != 422 ||
		!strings.Contains(r.body, `id="sp-beets-err"`) {
		t.Errorf("an unknown beet: %d", r.status)
	}

	want(t, "notice", b.post("/account/status-pages/1/notices", url.Values{"title": {"Invoices are late"}, "body": {"<script>x</script>"}, "severity": {"major"}}),
		http.StatusSeeOther, "/account/status-pages/1?done=notice#notices")
	if r := b.post("/account/status-pages/1/notices", url.Values{"title": {""}, "severity": {"major"}}); r.status != 422 || !strings.Contains(r.body, "The notice was not posted") {
		t.Errorf("a notice without a title: %d", r.status)
	}
	if r := b.post("/account/status-pages/1/notices", url.Values{"title": {"x"}, "severity": {"severe"}}); r.status != 422 {
		t.Errorf("a notice with an unknown severity: %d", r.status)
	}
	pub = b.get("/status/acme")
	if !strings.Contains(pub.body, "Major outage") || !strings.Contains(pub.body, "Invoices are late") || strings.Contains(pub.body, "<script>x") {
		t.Error("the public page lacks the open major notice, or shows its text as markup")
	}
	want(t, "resolve", b.post("/account/status-pages/1/notices/1/resolve", url.Values{}), http.StatusSeeOther, "/account/status-pages/1#notices")
	if pub := b.get("/status/acme").body; !strings.Contains(pub, "Past notices") || strings.Contains(pub, "Major outage") {
		t.Error("a resolved notice is not in the past notices")
	}
	want(t, "reopen", b.post("/account/status-pages/1/notices/1/reopen", url.Values{}), http.StatusSeeOther, "/account/status-pages/1#notices")
	if r := b.post("/account/status-pages/1/notices/1/explode", url.Values{}); r.status != 404 {
		t.Errorf("an unknown notice action: %d", r.status)
	}
	// Deleting a notice asks first: a dialog with script, a page without.
	if p := b.get("/account/status-pages/1").body; !strings.Contains(p, `href="/account/status-pages/1/notices/1/confirm/delete" data-dialog="dlg-notice-1"`) ||
		!strings.Contains(p, `<dialog id="dlg-notice-1"`) {
		t.Error("a notice's Delete does not ask first")
	}
	if r := b.get("/account/status-pages/1/notices/1/confirm/delete"); r.status != 200 || !strings.Contains(r.body, "Delete this notice?") ||
		!strings.Contains(r.body, `action="/account/status-pages/1/notices/1/delete"`) {
		t.Errorf("the notice's confirmation page: %d", r.status)
	}
	if r := b.get("/account/status-pages/1/notices/9/confirm/delete"); r.status != 404 {
		t.Errorf("confirming an unknown notice: %d", r.status)
	}
	want(t, "delete notice", b.post("/account/status-pages/1/notices/1/delete", url.Values{}), http.StatusSeeOther, "/account/status-pages/1#notices")
	if pub := b.get("/status/acme").body; strings.Contains(pub, "Invoices are late") {
		t.Error("a deleted notice is still on the public page")
	}

	if r := b.get("/account/status-pages/1/confirm/delete"); r.status != 200 || !strings.Contains(r.body, "Delete this status page?") {
		t.Errorf("confirm: %d", r.status)
	}
	want(t, "delete page", b.post("/account/status-pages/1/delete", url.Values{}), http.StatusSeeOther, "/account/status-pages?done=deleted")
	if r := b.get("/status/acme"); r.status != 404 {
		t.Errorf("a deleted page: %d", r.status)
	}
}

// TestBeetChoicesBeyondAPage: in an account with more beets than a select
// lists, the status page and maintenance forms still show the beets they
// hold, chosen; saving a status page unchanged keeps them, keeps one added
// through the API since the form was shown, and drops only one unchosen.
func TestBeetChoicesBeyondAPage(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	svc, ctx := a.Backend().Service, context.Background()
	for i := range beet.MaxPageLimit + 5 {
		if _, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: fmt.Sprintf("Job %04d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	last, late := int64(beet.MaxPageLimit+6), int64(beet.MaxPageLimit+7)
	for _, name := range []string{"Zulu export", "Zulu import"} {
		if _, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	want(t, "create", b.post("/account/status-pages", url.Values{"title": {"Acme"}, "slug": {"acme"}, "beet_ids": {"1", fmt.Sprint(last)}}),
		http.StatusSeeOther, "/account/status-pages/1?done=created")
	page := b.get("/account/status-pages/1").body
	if !strings.Contains(page, fmt.Sprintf(`<option value="%d" selected>Zulu export</option>`, last)) {
		t.Fatalf("the status page's form does not show its chosen beet %d", last)
	}
	if !strings.Contains(page, `id="sp-beets-left">7 more beets are not listed here`) {
		t.Error("the form does not say how many beets it leaves out")
	}
	// Meanwhile the API adds a beet the form did not show.
	ids := []int64{1, last, late}
	if _, err := svc.UpdateStatusPage(ctx, 1, 1, service.StatusPageUpdate{BeetIDs: &ids}); err != nil {
		t.Fatal(err)
	}
	// The form posted back as shown, unchanged.
	form := url.Values{"title": {"Acme 2"}, "slug": {"acme"}}
	for _, m := range regexp.MustCompile(`<option value="(\d+)" selected>`).FindAllStringSubmatch(page, -1) {
		form.Add("beet_ids", m[1])
	}
	form.Set("known_beet_ids", regexp.MustCompile(`name="known_beet_ids" value="([^"]*)"`).FindStringSubmatch(page)[1])
	want(t, "save unchanged", b.post("/account/status-pages/1", form), http.StatusSeeOther, "/account/status-pages/1?done=saved")
	pg, err := svc.StatusPage(ctx, 1, 1)
	if err != nil || !slices.Equal(pg.BeetIDs, ids) {
		t.Errorf("after saving the form unchanged the page shows beets %v (%v), want %v", pg.BeetIDs, err, ids)
	}
	// Unchoosing a beet the form showed drops it.
	form.Set("known_beet_ids", fmt.Sprintf("1 %d %d", last, late))
	form["beet_ids"] = []string{"1", fmt.Sprint(late)}
	want(t, "unchoose", b.post("/account/status-pages/1", form), http.StatusSeeOther, "/account/status-pages/1?done=saved")
	if pg, err := svc.StatusPage(ctx, 1, 1); err != nil || !slices.Equal(pg.BeetIDs, []int64{1, late}) {
		t.Errorf("after unchoosing %d the page shows %v (%v)", last, pg.BeetIDs, err)
	}

	// Find: the form sent by its Find button lists the chosen beets, then
	// those whose name matches, beyond the first page by name, and keeps
	// what was typed; nothing is saved.
	found := b.get("/account/status-pages/1?title=Acme+typed&slug=acme&find=zulu&beet_ids=1&known_beet_ids=1").body
	for _, opt := range []string{`<option value="1" selected>Job 0000</option>`, fmt.Sprintf(`<option value="%d" >Zulu export</option>`, last),
		fmt.Sprintf(`<option value="%d" >Zulu import</option>`, late), `value="Acme typed"`, `id="sp-find" name="find" type="search" value="zulu"`} {
		if !strings.Contains(found, opt) {
			t.Errorf("the form found by name lacks %s", opt)
		}
	}
	if strings.Contains(found, "Job 0001") || strings.Contains(found, `id="sp-beets-left"`) {
		t.Error("the form found by name lists beets that do not match, or says some are left out")
	}
	if pg, err := svc.StatusPage(ctx, 1, 1); err != nil || pg.Title != "Acme 2" {
		t.Errorf("finding beets changed the page: %+v (%v)", pg, err)
	}
	if p := b.get("/account/status-pages?find=job+1&title=Ops").body; strings.Count(p, "<option value=") != 5 ||
		!strings.Contains(p, `<option value="1001" >Job 1000</option>`) || !strings.Contains(p, `value="Ops"`) {
		t.Errorf("the new page's form found by name does not list just Job 1000-1004 or loses the title typed")
	}

	// A window for a beet the first page by name leaves out: chosen in the
	// form, named in the account's list.
	if p := b.get(fmt.Sprintf("/account/maintenance/new?beet=%d", late)).body; !strings.Contains(p, fmt.Sprintf(`<option value="%d" selected>Zulu import</option>`, late)) {
		t.Errorf("the new-window form does not show beet %d chosen", late)
	}
	want(t, "window", b.post("/account/maintenance", url.Values{"mode": {"repeat"}, "beet_id": {fmt.Sprint(late)}, "cron": {"0 2 * * 0"},
		"timezone": {"UTC"}, "duration_minutes": {"30"}}), http.StatusSeeOther, "/account?done=window#maintenance")
	if p := b.get("/account").body; !strings.Contains(p, "<td>Zulu import</td>") {
		t.Error("the account's windows do not name the beet")
	}
}

// TestStatusPageFormSaysWhatIsMissing: a page that would show nothing is
// refused in the form's words, not the API's field names.
func TestStatusPageFormSaysWhatIsMissing(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	r := b.post("/account/status-pages", url.Values{"title": {"Acme"}, "slug": {"acme"}})
	if got := fieldError(r.body, "sp-tags"); r.status != 422 || got != "name a tag here or choose a beet below: a page shows at least one" || strings.Contains(r.body, "beet_ids)") {
		t.Errorf("a page that shows nothing: %d, the tags field says %q", r.status, got)
	}
}
