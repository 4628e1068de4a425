package api_test

import (
	"net/http"
	"testing"

	"github.com/beethq/beet"
)

// TestCreateWithSchedule: one POST /api/v1/beets takes the schedule, as
// the dashboard's new-beet form does: a period with grace, or a cron line
// with grace, which without a zone of its own runs in the beet's. A bad
// cron line is a 422 naming detection.cron.
func TestCreateWithSchedule(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Nightly backup", "timezone": "Europe/Berlin",
		"detection": map[string]any{"mode": "cron", "cron": "0 2 * * *", "grace_seconds": 1800}})
	if want := (beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "Europe/Berlin", GraceSeconds: 1800}); b.Detection != want {
		t.Errorf("cron beet: %+v, want %+v", b.Detection, want)
	}
	b = e.createBeet(e.keyA, map[string]any{"name": "Webhook", "detection": map[string]any{"mode": "period", "period_seconds": 3600, "grace_seconds": 300}})
	if want := (beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300}); b.Detection != want {
		t.Errorf("period beet: %+v, want %+v", b.Detection, want)
	}
	r := e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "x", "detection": map[string]any{"mode": "cron", "cron": "0 25 * * *"}})
	if code, field := r.errorCode(t); r.status != http.StatusUnprocessableEntity || code != "validation_failed" || field != "detection.cron" {
		t.Errorf("a bad cron line: %d %s %s", r.status, code, field)
	}
}
