package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

// TestNewBeetSaysItsSchedule: the new-beet form takes the schedule (learn
// it, every …, a cron schedule) and creates the beet with it in one post;
// a refused setting is explained next to its field, which is marked and
// focused, in the words the service (and so the API) uses; nothing is
// created then. The preview answers the next three expected times in the
// zone it names, and refuses exactly what the post refuses.
func TestNewBeetSaysItsSchedule(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	svc := a.Backend().Service
	ctx := context.Background()

	form := b.get("/beets/new").body
	for _, s := range []string{`name="mode" value="auto" checked`, `name="mode" value="period"`, `name="mode" value="cron"`,
		`id="period_minutes"`, `id="grace_minutes"`, `id="cron"`, `id="cron_timezone"`, `id="schedule-preview"`} {
		if !strings.Contains(form, s) {
			t.Errorf("the new-beet form lacks %s", s)
		}
	}

	want(t, "a cron beet", b.post("/beets", url.Values{"name": {"Nightly backup"}, "timezone": {"Europe/Berlin"},
		"mode": {"cron"}, "cron": {"0 2 * * *"}, "cron_timezone": {""}, "grace_minutes": {"30"}}), http.StatusSeeOther, "/beets/1?created=1")
	if got, err := svc.Beet(ctx, 1, 1); err != nil || got.Detection != (beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 1800}) {
		t.Errorf("the cron beet: %+v %v", got.Detection, err)
	}
	want(t, "a period beet", b.post("/beets", url.Values{"name": {"Webhook"}, "timezone": {"UTC"},
		"mode": {"period"}, "period_minutes": {"60"}, "grace_minutes": {"5"}}), http.StatusSeeOther, "/beets/2?created=1")
	if got, err := svc.Beet(ctx, 1, 2); err != nil || got.Detection != (beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300}) {
		t.Errorf("the period beet: %+v %v", got.Detection, err)
	}
	want(t, "an auto beet", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}, "mode": {"auto"}}), http.StatusSeeOther, "/beets/3?created=1")

	// What the service says of a bad cron line is what the form shows.
	_, serr := svc.CreateBeet(ctx, 1, service.BeetInput{Name: "x", Timezone: "UTC",
		Detection: &beet.Detection{Mode: beet.ModeCron, Cron: "0 25 * * *", Timezone: "UTC"}})
	refused := []struct {
		name                 string
		form                 url.Values
		input, errID, errMsg string
	}{
		{"bad cron", url.Values{"mode": {"cron"}, "cron": {"0 25 * * *"}}, `id="cron"`, "cron-err", beet.ErrorMessage(serr)},
		{"short period", url.Values{"mode": {"period"}, "period_minutes": {"0.5"}}, `id="period_minutes"`, "period-err", "Period (minutes) must be from 1 to 525600"},
		{"bad zone", url.Values{"mode": {"cron"}, "cron": {"0 2 * * *"}, "cron_timezone": {"Mars/Olympus"}}, `id="cron_timezone"`, "cron-tz-err", "Schedule time zone: "},
		{"no name", url.Values{"name": {""}, "mode": {"auto"}}, `id="name"`, "name-err", "is required"},
	}
	for _, c := range refused {
		if !c.form.Has("name") {
			c.form.Set("name", "Refused")
		}
		c.form.Set("timezone", "UTC")
		r := b.post("/beets", c.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422", c.name, r.status)
			continue
		}
		tag := regexp.MustCompile(`<input ` + c.input + `[^>]*>`).FindString(r.body)
		if !strings.Contains(tag, `aria-invalid="true"`) || !strings.Contains(tag, `aria-describedby="`+c.errID+`"`) || !strings.Contains(tag, "autofocus") {
			t.Errorf("%s: the field is not marked, described and focused: %s", c.name, tag)
		}
		// The explanation comes right after its field, not above the form.
		i := strings.Index(r.body, tag)
		msg := between(r.body[i:], `<p class="field-error" id="`+c.errID+`">`, "</p>")
		if msg == "" || strings.Index(r.body[i:], msg) > len(tag)+40 || !strings.Contains(html.UnescapeString(msg), c.errMsg) {
			t.Errorf("%s: the error next to the field is %q, want it right after the field, saying %q", c.name, msg, c.errMsg)
		}
		if strings.Count(r.body, "autofocus") != 1 {
			t.Errorf("%s: %d fields take the focus", c.name, strings.Count(r.body, "autofocus"))
		}
	}
	if beets, n, err := svc.Beets(ctx, 1, beet.BeetFilter{Limit: 10}); err != nil || n != 3 {
		t.Errorf("refused forms created beets: %d %v %v", n, beets, err)
	}

	// The preview: the next three runs, in the zone it names.
	var p struct {
		Expects, Label, Field, Error string
		Next                         []string
	}
	preview := func(q url.Values) {
		t.Helper()
		r := b.get("/beets/schedule-preview?" + q.Encode())
		p.Expects, p.Label, p.Field, p.Error, p.Next = "", "", "", "", nil
		if r.status != 200 || json.Unmarshal([]byte(r.body), &p) != nil {
			t.Fatalf("preview %v: %d %s", q, r.status, r.body)
		}
	}
	preview(url.Values{"mode": {"cron"}, "cron": {"30 6 * * 1-5"}, "timezone": {"Asia/Tokyo"}})
	if len(p.Next) != 3 || !strings.Contains(p.Label, "Asia/Tokyo") || p.Error != "" {
		t.Fatalf("cron preview: %+v", p)
	}
	seen := map[string]bool{}
	for _, s := range p.Next {
		if !strings.HasSuffix(s, ", 06:30 JST") || strings.HasPrefix(s, "Sat") || strings.HasPrefix(s, "Sun") || seen[s] {
			t.Errorf("preview times %q: want three weekdays at 06:30 JST", p.Next)
		}
		seen[s] = true
	}
	if !strings.Contains(p.Expects, "Expects a run") {
		t.Errorf("cron preview in words: %q", p.Expects)
	}
	preview(url.Values{"mode": {"period"}, "period_minutes": {"90"}, "grace_minutes": {"10"}, "timezone": {"UTC"}})
	if len(p.Next) != 3 || !strings.Contains(p.Expects, "every 1 h 30 min, plus 10 min grace") {
		t.Errorf("period preview: %+v", p)
	}
	preview(url.Values{"mode": {"auto"}, "timezone": {"UTC"}})
	if len(p.Next) != 0 || !strings.Contains(p.Expects, detect.ArmingRule.Words()) {
		t.Errorf("auto preview: %+v", p)
	}
	for _, c := range refused[:3] {
		c.form.Set("timezone", "UTC")
		preview(c.form)
		if p.Field == "" || !strings.Contains(p.Error, c.errMsg) || len(p.Next) != 0 {
			t.Errorf("preview of the %s: %+v, want the post's error %q", c.name, p, c.errMsg)
		}
	}
}

// TestNewBeetPageIsOneMessage: a beet that never had an event shows its
// URL with one copy button and three lines to paste (curl, <img>, a
// crontab line), in one block at the top; no chart, no empty tables, no
// second banner. Its first event turns the page into the usual one.
func TestNewBeetPageIsOneMessage(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	token := tokenOf(t, b, 1)
	masked := a.URL() + "/api/v1/beet/bt_" + strings.Repeat("•", len(token)-7) + token[len(token)-4:]
	page := b.get("/beets/1?created=1").body
	start := between(page, `<section id="send"`, "<details")
	if start == "" || strings.Index(page, `<section id="send"`) > strings.Index(page, `id="history"`) {
		t.Fatalf("no send block before the history")
	}
	if n := strings.Count(start, ">Copy URL</button>"); n != 1 {
		t.Errorf("%d Copy URL buttons at the top, want 1", n)
	}
	for _, line := range []string{`curl -fsS -m 10 --retry 3 -o /dev/null &#34;` + masked + `&#34;`, `&lt;img src=&#34;` + masked + `&#34;`,
		`0 2 * * * /path/to/job &amp;&amp; curl -fsS -m 10 --retry 3 -o /dev/null &#34;` + masked + `&#34;`} {
		if !strings.Contains(start, line) {
			t.Errorf("the first block lacks %s", line)
		}
	}
	if strings.Count(start, `data-copy=`) != 4 {
		t.Errorf("want a copy button for the URL and each of the three lines")
	}
	for _, s := range []string{`id="chart"`, `id="no-events"`, `id="dayone"`, `class="notice"`} {
		if strings.Contains(page, s) {
			t.Errorf("a new beet's page has %s", s)
		}
	}
	if !strings.Contains(start, "Your beet is ready: send its first event") {
		t.Errorf("the block does not say the beet is ready")
	}
	hit(t, "GET", a.URL()+"/api/v1/beet/"+token, "")
	waitFor(t, "the first event", func() bool { return strings.Contains(b.get("/beets/1").body, `id="chart"`) })
	page = b.get("/beets/1").body
	if strings.Contains(page, `id="start-lines"`) || strings.Contains(page, "data-fresh") || strings.Index(page, `id="chart"`) > strings.Index(page, `id="ingest-url"`) {
		t.Errorf("after its first event the page still leads with the URL")
	}
}

// TestLearningTextOneSource: every sentence on a learning beet's page that
// says when alerts start uses detect.ArmingRule's numbers (events, not
// bursts), and every time on it is in the beet's zone, which the page's
// headings name.
func TestLearningTextOneSource(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Signup"}, "timezone": {"Asia/Tokyo"}}), http.StatusSeeOther, "/beets/1?created=1")
	ingest := a.URL() + "/api/v1/beet/" + tokenOf(t, b, 1)
	hit(t, "GET", ingest, "")
	hit(t, "GET", ingest, "")
	waitFor(t, "learning", func() bool {
		return strings.Contains(b.get("/beets/1").body, `id="dayone">2 events in the last 24 hours.`)
	})
	page := html.UnescapeString(b.get("/beets/1").body)
	if strings.Contains(page, "bursts") {
		t.Errorf("a learning beet's page speaks of bursts: %q", regexp.MustCompile(`[^.]*bursts[^.]*`).FindString(page))
	}
	rule := detect.ArmingRule
	allowed := map[string]bool{strconv.Itoa(rule.Events): true, strconv.Itoa(rule.LatestEvents): true}
	for _, m := range regexp.MustCompile(`(?:once|given|if) (\d+) events`).FindAllStringSubmatch(page, -1) {
		if !allowed[m[1]] {
			t.Errorf("the page says %q; the rule is %d and %d events", m[0], rule.Events, rule.LatestEvents)
		}
	}
	if !strings.Contains(page, "Full alerts from ") || !strings.Contains(page, "once "+strconv.Itoa(rule.Events)+" events came") {
		t.Errorf("the page does not state the arming rule:\n%s", between(page, `id="model"`, "</div>"))
	}
	// Times in words ("Jan 2 15:04 MST") and in tables ("2006-01-02 15:04:05 MST") are in JST.
	for _, m := range regexp.MustCompile(`(?:[A-Z][a-z]{2} \d{1,2} \d{2}:\d{2}|\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?) ([A-Z]{3,4})`).FindAllStringSubmatch(page, -1) {
		if m[1] != "JST" {
			t.Errorf("the page shows %q, not in Asia/Tokyo", m[0])
		}
	}
}

// The beet page's detection form takes an empty schedule zone as the
// beet's, as the new-beet form does.
func TestDetectionFormZoneDefaultsToTheBeets(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Reports"}, "timezone": {"Europe/Riga"}}), http.StatusSeeOther, "/beets/1?created=1")
	want(t, "cron without a zone", b.post("/beets/1/detection", url.Values{"mode": {"cron"}, "cron": {"*/10 * * * *"}, "cron_timezone": {""}}),
		http.StatusSeeOther, "/beets/1#detection")
	if got, err := a.Backend().Service.Beet(context.Background(), 1, 1); err != nil || got.Detection.Timezone != "Europe/Riga" || got.Detection.Cron != "*/10 * * * *" {
		t.Fatalf("detection %+v, %v; want the cron in the beet's zone", got.Detection, err)
	}
	if r := b.get("/beets/1/backtest?mode=cron&cron=*/10+*+*+*+*&cron_timezone="); r.status != http.StatusOK {
		t.Errorf("preview of a cron without a zone: %d", r.status)
	}
}

// A page past the end of the list (a bookmark, beets deleted since) says
// so and leads back, instead of greeting an empty account.
func TestListPastTheEnd(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	b.post("/beets", url.Values{"name": {"Reports"}})
	page := b.get("/?q=rep&offset=5000").body
	if strings.Contains(page, "No beets yet") || !strings.Contains(page, "No beets this far: the list has 1.") ||
		!strings.Contains(page, `href="/?q=rep">Back to the first page</a>`) {
		t.Errorf("past the end:\n%s", between(page, `id="beet-list"`, "</div>"))
	}
}
