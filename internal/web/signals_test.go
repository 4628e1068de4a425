package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

func hit(t *testing.T, method, u, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("User-Agent", "backup.sh/1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// TestSignalsOnTheBeetPage: the event log says what each event reported
// and how long a run took; the snippets show the job wrapper; hits with
// the old token after a rotation are shown with their count and last
// address; the run-time limit is set in the detection form.
func TestSignalsOnTheBeetPage(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ops@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Backup"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	token := tokenOf(t, b, 1)
	ingest := a.URL() + "/api/v1/beet/" + token
	page := b.get("/beets/1").body
	if !strings.Contains(page, html.EscapeString(ingest+`/start" > /dev/null`)) || !strings.Contains(page, html.EscapeString(ingest+`/$?"`)) {
		t.Errorf("the job wrapper snippet is missing or does not use this beet's URL")
	}
	hit(t, "GET", ingest+"/start", "")
	hit(t, "POST", ingest+"/2", "rsync: connection refused")
	waitFor(t, "the failure in the event log", func() bool { return strings.Contains(b.get("/beets/1").body, "failed with exit code 2 after ") })
	page = b.get("/beets/1").body
	for _, s := range []string{"rsync: connection refused", "<td class=\"signal\">started</td>", "The job reported failure (exit code 2) at "} {
		if !strings.Contains(page, s) {
			t.Errorf("beet page lacks %q", s)
		}
	}

	want(t, "rotate", b.post("/beets/1/rotate", nil), http.StatusSeeOther, "")
	hit(t, "GET", ingest, "")
	hit(t, "GET", ingest+"/0", "")
	waitFor(t, "the old token's hits on the page", func() bool {
		return strings.Contains(b.get("/beets/1").body, "was used 2 times since rotation, last from 127.0.0.1 at ")
	})
	if page := b.get("/beets/1").body; !strings.Contains(page, beet.Redact(token)) || strings.Count(page, token) != 0 {
		t.Errorf("the old token is not named by its prefix alone")
	}

	r := b.post("/beets/1/detection", url.Values{"mode": {"period"}, "period_minutes": {"60"}, "grace_minutes": {"5"}, "runtime_minutes": {"30"}})
	want(t, "save detection", r, http.StatusSeeOther, "/beets/1#detection")
	got, err := a.Backend().Service.Beet(context.Background(), 1, 1)
	if err != nil || got.Detection.MaxRuntimeSeconds != 1800 {
		t.Fatalf("after saving a 30 min limit: %+v, %v", got, err)
	}
	if page := b.get("/beets/1").body; !strings.Contains(page, `name="runtime_minutes" inputmode="decimal" value="30"`) ||
		!strings.Contains(page, "A run still going after 30 min turns the beet down.") {
		t.Errorf("the limit is not shown back")
	}
	r = b.post("/beets/1/detection", url.Values{"mode": {"auto"}, "runtime_minutes": {"soon"}})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `id="runtime_minutes" name="runtime_minutes" inputmode="decimal" value="soon" placeholder="learned in auto mode" aria-describedby="runtime-hint" aria-invalid="true"`) {
		t.Errorf("a bad limit: %d, field not marked", r.status)
	}
}

// TestUnknownTokensPage: requests with unknown or malformed tokens are
// listed by prefix and shape, never whole, with the client's address and
// user agent on a single-account installation; with several accounts an
// account sees none of the requests meant for no beet of its own.
func TestUnknownTokensPage(t *testing.T) {
	a := startApp(t, func(c *config.Config) {})
	b := newBrowser(t, a.URL())
	setup(t, b, "ops@example.com")
	unknown := beet.NewToken()
	hit(t, "GET", a.URL()+"/api/v1/beet/"+unknown+"/start", "")
	hit(t, "GET", a.URL()+"/api/v1/beet/bt_short", "")
	waitFor(t, "both on the page", func() bool {
		p := b.get("/unknown-tokens").body
		return strings.Contains(p, "no beet has it") && strings.Contains(p, "wrong length (8 characters, want 31)")
	})
	page := b.get("/unknown-tokens").body
	if strings.Contains(page, unknown[beet.RedactedLen:]) || !strings.Contains(page, beet.Redact(unknown)) {
		t.Errorf("the unknown token is not cut to its prefix")
	}
	if !strings.Contains(page, "<td>127.0.0.1</td>") || !strings.Contains(page, "backup.sh/1") {
		t.Errorf("a single-account installation does not show the client")
	}
	if !strings.Contains(b.get("/account").body, `href="/unknown-tokens"`) {
		t.Errorf("the account page does not link to the unknown tokens")
	}
	if _, _, err := a.Backend().Service.CreateAccount(context.Background(), "other@example.com", "password-2", beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	page = b.get("/unknown-tokens").body
	if strings.Contains(page, "127.0.0.1") || strings.Contains(page, "backup.sh/1") || !strings.Contains(page, "several accounts") ||
		strings.Contains(page, "no beet has it") || strings.Contains(page, beet.Redact(unknown)) {
		t.Errorf("with several accounts the page still shows requests meant for no beet of the account:\n%s", page)
	}
}

// TestRunDurationsCharted: runs that ended in the range are in the chart
// data with their durations and outcomes, oldest first, and the run-time
// limit once one is set; a beet without runs has none.
func TestRunDurationsCharted(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ops@example.com")
	want(t, "create", b.post("/beets", url.Values{"name": {"Backup"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	ingest := a.URL() + "/api/v1/beet/" + tokenOf(t, b, 1)
	type chart struct {
		Runs *struct {
			Times        []int64   `json:"times"`
			Seconds      []float64 `json:"seconds"`
			Failed       []bool    `json:"failed"`
			LimitSeconds float64   `json:"limit_seconds"`
			Longest      string    `json:"longest"`
			Limit        string    `json:"limit"`
		} `json:"runs"`
	}
	read := func() chart {
		var c chart
		r := b.get("/beets/1/chart.json?range=24h")
		if err := json.Unmarshal([]byte(r.body), &c); err != nil || r.status != 200 {
			t.Fatalf("chart.json: %d %v", r.status, err)
		}
		return c
	}
	hit(t, "GET", ingest, "")
	waitFor(t, "the ping", func() bool { return strings.Contains(b.get("/beets/1").body, "<strong>1</strong> in 24 h") })
	if c := read(); c.Runs != nil {
		t.Errorf("a beet that only pings has runs: %+v", c.Runs)
	}
	if !strings.Contains(b.get("/beets/1").body, `<div id="runs" class="runs" hidden>`) {
		t.Error("the run-time chart is not on the page (hidden until runs come)")
	}

	hit(t, "GET", ingest+"/start", "")
	hit(t, "GET", ingest+"/0", "")
	hit(t, "GET", ingest+"/start", "")
	hit(t, "GET", ingest+"/fail", "")
	hit(t, "GET", ingest+"/log", "still here")
	var c chart
	waitFor(t, "two runs in the chart data", func() bool { c = read(); return c.Runs != nil && len(c.Runs.Times) == 2 })
	if !slices.Equal(c.Runs.Failed, []bool{false, true}) || len(c.Runs.Seconds) != 2 || c.Runs.Seconds[0] < 0 || c.Runs.Seconds[1] < 0 ||
		c.Runs.Times[0] > c.Runs.Times[1] || c.Runs.LimitSeconds != 0 {
		t.Errorf("runs = %+v; want a success then a failure, oldest first, no limit", c.Runs)
	}
	// Six events, three of them runs' ends (the ping, /0 and /fail): the
	// page counts runs, as detection does, not starts and logs.
	if page := b.get("/beets/1").body; !strings.Contains(page, "<strong>3</strong> in 24 h") {
		t.Errorf("the page does not count 3 events in 24 h (starts and logs are no runs): %s", between(page, "<strong>", "in 24 h"))
	}
	evs, err := a.Backend().Service.Events(context.Background(), 1, beet.EventFilter{BeetID: 1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var stored []float64
	var longest time.Duration
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Duration != nil {
			stored = append(stored, evs[i].Duration.Seconds())
			longest = max(longest, *evs[i].Duration)
		}
	}
	if !slices.Equal(stored, c.Runs.Seconds) {
		t.Errorf("charted durations %v, stored %v", c.Runs.Seconds, stored)
	}
	// The chart's text says the longest run in the page's words: these
	// quick runs are some milliseconds, not "0 s".
	if c.Runs.Longest != detect.Duration(longest) || c.Runs.Limit != "" {
		t.Errorf("longest run %q, limit %q; want %q and none", c.Runs.Longest, c.Runs.Limit, detect.Duration(longest))
	}
	b.post("/beets/1/detection", url.Values{"mode": {"auto"}, "runtime_minutes": {"30"}})
	if c := read(); c.Runs == nil || c.Runs.LimitSeconds != 1800 || c.Runs.Limit != "30 min" {
		t.Errorf("after a 30 min limit: %+v", c.Runs)
	}
}

// TestUnknownTokensSurface: a token one character off a live one and a
// rotated-out token, used in the last 24 hours, put a note on the beet
// list that links the unknown-tokens page and names the beet each was
// probably meant for; neither page shows the live token. Another account
// sees neither beet named, nor a note for requests that are not its own.
func TestUnknownTokensSurface(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ops@example.com")
	ctx := context.Background()
	svc := a.Backend().Service
	for _, name := range []string{"Nightly backup", "Checkout"} {
		if _, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if page := b.get("/").body; strings.Contains(page, "unknown-banner") {
		t.Fatal("a note on unknown tokens before any came")
	}
	live := tokenOf(t, b, 1)
	typo := byte('7')
	if live[12] == typo {
		typo = '8'
	}
	mistyped := live[:12] + string(typo) + live[13:]
	old := tokenOf(t, b, 2)
	if _, err := svc.RotateToken(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	hit(t, "GET", a.URL()+"/api/v1/beet/"+mistyped, "")
	hit(t, "POST", a.URL()+"/api/v1/beet/"+old+"/0", "")
	var list string
	waitFor(t, "the note names both beets", func() bool {
		list = b.get("/").body
		return strings.Contains(list, `href="/beets/1">Nightly backup</a> (a typo of its token)`) &&
			strings.Contains(list, `href="/beets/2">Checkout</a> (its old token)`)
	})
	if !strings.Contains(list, `id="unknown-banner"`) || !strings.Contains(list, "Requests with 2 tokens that match no beet arrived in the last 24 hours") ||
		!strings.Contains(list, `href="/unknown-tokens">See the unknown tokens</a>`) {
		t.Errorf("the beet list's note does not say so or link the page:\n%s", between(list, `id="unknown-banner"`, "</p>"))
	}
	page := b.get("/unknown-tokens").body
	if !strings.Contains(page, `href="/beets/1">Nightly backup</a> <span class="hint">(a typo of its token)`) ||
		!strings.Contains(page, `href="/beets/2">Checkout</a> <span class="hint">(its old token)`) {
		t.Errorf("the unknown-tokens page does not name the beets meant")
	}
	for _, s := range []string{list, page} {
		for _, tok := range []string{live, mistyped, old, tokenOf(t, b, 2)} {
			if strings.Contains(s, tok[beet.RedactedLen:]) {
				t.Errorf("a page shows a token whole (or its secret part)")
			}
		}
	}

	// Another account: not its beets, not its requests.
	if _, _, err := svc.CreateAccount(ctx, "other@example.com", "correct horse", beet.PlanFree); err != nil {
		t.Fatal(err)
	}
	other := newBrowser(t, a.URL())
	want(t, "sign in", other.post("/login", url.Values{"email": {"other@example.com"}, "password": {"correct horse"}}), http.StatusSeeOther, "/")
	if s := other.get("/").body; strings.Contains(s, "unknown-banner") {
		t.Errorf("another account's beet list has a note on the first account's unknown tokens")
	}
	if s := other.get("/unknown-tokens").body; strings.Contains(s, "Nightly backup") || strings.Contains(s, "Checkout") || strings.Contains(s, beet.Redact(old)) ||
		strings.Contains(s, beet.Redact(mistyped)) {
		t.Errorf("another account's unknown-tokens page names the first account's beets or shows its old or mistyped token")
	}
	// The first account still sees both, now on an installation with two accounts.
	if s := b.get("/").body; !strings.Contains(s, "Nightly backup</a> (a typo of its token)") || !strings.Contains(s, "Checkout</a> (its old token)") {
		t.Errorf("with two accounts, the first no longer hears of its own unknown tokens")
	}
}
