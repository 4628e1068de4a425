package api

import (
	"encoding/json"
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
	if w["model"] != "schedule" || w["cron"] != "30 6 * * 1-5" || w["timezone"] != "Europe/Berlin" ||
		w["grace_seconds"] != float64(8640) || w["armed_at"] == nil || w["alert_after_seconds"] == nil {
		t.Fatalf("watching %s", raw)
	}
	b.Detection = beet.Detection{Mode: beet.ModeCron, Cron: "30 6 * * 1-5", Timezone: "Europe/Berlin", GraceSeconds: 8640}
	if w := toBeetJSON(b).Watching; w != nil {
		t.Fatalf("watching on a cron beet: %+v", w)
	}
}
