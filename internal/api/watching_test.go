package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// TestBeetJSONWatching: an auto beet that learned a weekday job shows
// what it watches for, from when, and the cron line that makes it an
// explicit cron beet; a cron beet and a beet without events show null.
func TestBeetJSONWatching(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "Europe/Berlin", Detection: beet.Detection{Mode: beet.ModeAuto}}
	if w := toBeetJSON(b).Watching; w != nil {
		t.Fatalf("watching before any event: %+v", w)
	}
	for d := range 21 {
		day := time.Date(2026, 1, 5+d, 6, 30, 20, 0, berlin)
		if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
			continue
		}
		if _, err := detect.ApplyEvents(b, beet.EventSpan{First: day, Last: day, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := json.Marshal(toBeetJSON(b))
	var got struct {
		Watching map[string]any `json:"watching"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	w := got.Watching
	// Every run came at 06:30:20: a job pinged as it starts, a minute's grace.
	if w["model"] != "schedule" || w["cron"] != "30 6 * * 1-5" || w["timezone"] != "Europe/Berlin" ||
		w["grace_seconds"] != float64(60) || w["armed_at"] == nil || w["alert_after_seconds"] == nil {
		t.Fatalf("watching %s", raw)
	}
	b.Detection = beet.Detection{Mode: beet.ModeCron, Cron: "30 6 * * 1-5", Timezone: "Europe/Berlin", GraceSeconds: 8640}
	if w := toBeetJSON(b).Watching; w != nil {
		t.Fatalf("watching on a cron beet: %+v", w)
	}
}

// TestBeetJSONWatchingFromFirstRuns: while an auto beet learns, the API
// says what is already watched: after three runs of a daily job, the
// schedule, armed then; for irregular events, the silence the learning
// guard flags, in seconds after the last event.
func TestBeetJSONWatchingFromFirstRuns(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	watching := func(b *beet.Beet) map[string]any {
		raw, _ := json.Marshal(toBeetJSON(b))
		var got struct {
			Watching map[string]any `json:"watching"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got.Watching
	}
	job := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "Europe/Berlin", Detection: beet.Detection{Mode: beet.ModeAuto}}
	for d := range 3 {
		day := time.Date(2026, 1, 5+d, 6, 30, 20, 0, berlin) // Monday to Wednesday
		if _, err := detect.ApplyEvents(job, beet.EventSpan{First: day, Last: day, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if w := watching(job); w["model"] != "schedule" || w["cron"] != "30 6 * * 1-5" || w["armed_at"] == nil || job.Status != beet.StatusUp {
		t.Fatalf("after three daily runs (%s): %v", job.Status, w)
	}
	feed := &beet.Beet{ID: 2, Status: beet.StatusNew, Timezone: "Europe/Berlin", Detection: beet.Detection{Mode: beet.ModeAuto}}
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, berlin)
	for _, gap := range []time.Duration{17, 41, 9, 63, 25, 33} {
		at = at.Add(gap * time.Minute)
		if _, err := detect.ApplyEvents(feed, beet.EventSpan{First: at, Last: at, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	w := watching(feed)
	if d, _ := w["description"].(string); w["model"] != "learning" || w["armed_at"] != nil || w["alert_after_seconds"] == nil ||
		!strings.Contains(d, "a silence is flagged after") || feed.DueAt == nil {
		t.Fatalf("learning irregular events: %v (due %v)", w, feed.DueAt)
	}
}
