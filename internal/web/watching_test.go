package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

// TestLearnedScheduleBecomesCron: an auto beet that learned a weekday job
// (its events stored through the live detection path) shows on its page
// what auto mode watches for and since when; its button turns the learned
// schedule into an explicit cron beet.
func TestLearnedScheduleBecomesCron(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	ctx := context.Background()
	svc := a.Backend().Service
	job, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: "Invoice export", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	var times []time.Time
	for d := -24; d < 0; d++ {
		day := now.AddDate(0, 0, d)
		if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
			continue
		}
		times = append(times, time.Date(day.Year(), day.Month(), day.Day(), 6, 30, 40, 0, berlin).UTC())
	}
	addPastEvents(t, a, job.ID, times)
	page := b.get("/beets/1").body
	for _, s := range []string{"What auto mode watches for", "runs weekdays at 06:30 Europe/Berlin", "Alerting since", "Make it a cron beet", "30 6 * * 1-5"} {
		if !strings.Contains(page, s) {
			t.Errorf("beet page lacks %q", s)
		}
	}
	// The headline under the status says what the model expects now, not
	// the learned flip's words of its third run ("weekends not seen yet").
	if m := regexp.MustCompile(`<p class="reason-line" id="reason">([^<]*)</p>`).FindStringSubmatch(page); m == nil ||
		!strings.HasPrefix(html.UnescapeString(m[1]), "Learned: runs weekdays at 06:30 Europe/Berlin") || strings.Contains(m[1], "not seen yet") {
		t.Errorf("headline %q; want what the model expects now", m)
	}
	form := url.Values{}
	i := strings.Index(page, "data-make-cron")
	if i < 0 {
		t.Fatal("no button to make it a cron beet")
	}
	start := strings.LastIndex(page[:i], "<form")
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`).FindAllStringSubmatch(page[start:i], -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	want(t, "make it a cron beet", b.post("/beets/1/detection", form), http.StatusSeeOther, "/beets/1#detection")
	got, err := svc.Beet(ctx, 1, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Every run at 06:30:40: a job pinged as it starts, whose grace is a minute.
	if d := got.Detection; d.Mode != beet.ModeCron || d.Cron != "30 6 * * 1-5" || d.Timezone != "Europe/Berlin" || d.GraceSeconds != 60 {
		t.Fatalf("detection after the button: %+v", d)
	}
	if p := b.get("/beets/1").body; strings.Contains(p, "What auto mode watches for") || !strings.Contains(p, "Expects a run") {
		t.Error("the cron beet's page still shows the learned model, or not its schedule")
	}
}

// TestLearningBeetShowsWhatIsWatched: an auto beet still learning, with a
// few irregular events, shows on its page that a silence is already
// watched, and after how long it is flagged.
func TestLearningBeetShowsWhatIsWatched(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	ctx := context.Background()
	feed, err := a.Backend().Service.CreateBeet(ctx, 1, service.BeetInput{Name: "Sign-ups", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-5 * time.Hour).UTC()
	var times []time.Time
	for _, gap := range []time.Duration{17, 41, 9, 63, 25, 33} {
		at = at.Add(gap * time.Minute)
		times = append(times, at)
	}
	addPastEvents(t, a, feed.ID, times)
	page := b.get("/beets/1").body
	for _, s := range []string{"What auto mode watches for", "Watched while learning: a silence of ", "a silence far longer than any gap seen is flagged"} {
		if !strings.Contains(page, s) {
			t.Errorf("beet page lacks %q", s)
		}
	}
}

// TestPausedPageSaysNoAlerts: a paused learned beet's page says it raises
// no alerts, and nothing that says otherwise: no "Alerting since", no
// "Earliest reliable alert", no "Next check" in its header.
func TestPausedPageSaysNoAlerts(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	ctx := context.Background()
	svc := a.Backend().Service
	job, err := svc.CreateBeet(ctx, 1, service.BeetInput{Name: "Hourly export"})
	if err != nil {
		t.Fatal(err)
	}
	first := time.Now().Add(-4 * time.Hour).Truncate(time.Hour).Add(13 * time.Minute)
	var times []time.Time
	for i := range 4 {
		times = append(times, first.Add(time.Duration(i)*time.Hour))
	}
	addPastEvents(t, a, job.ID, times)
	watched := []string{"Alerting since", "Earliest reliable alert", "Next check"}
	page := b.get("/beets/1").body
	for _, s := range watched {
		if !strings.Contains(page, s) {
			t.Fatalf("learned beet's page lacks %q", s)
		}
	}
	if _, err := svc.Pause(ctx, 1, job.ID); err != nil {
		t.Fatal(err)
	}
	page = b.get("/beets/1").body
	if !strings.Contains(page, "Paused: no alerts until it is resumed") {
		t.Error("paused page lacks \"Paused: no alerts until it is resumed\"")
	}
	for _, s := range watched {
		if strings.Contains(page, s) {
			t.Errorf("paused page says %q", s)
		}
	}
}

// addPastEvents stores one event at each of times for beet id, each in its
// own commit through detection, as pings at those times would have.
func addPastEvents(t *testing.T, a *app.App, id int64, times []time.Time) {
	t.Helper()
	observe := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		fl, err := detect.ApplyEvents(b, sp)
		if err != nil {
			t.Error(err)
		}
		return fl
	}
	for i, at := range times {
		var eid beet.EventID
		eid[0], eid[1] = byte(id), byte(i)
		if err := a.Backend().Store.AddEvents(context.Background(), []beet.Event{{ID: eid, BeetID: id, ReceivedAt: at, Method: "GET"}}, observe); err != nil {
			t.Fatal(err)
		}
	}
}
