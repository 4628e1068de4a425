package detectjudge

import (
	"bytes"
	"strings"
	"testing"
)

// TestCronSweep: Los Angeles' working hours on a UTC beet cross UTC's
// midnight, and a job all day on weekdays on Berlin's clock ends its week
// at 23:00 UTC on Fridays. A year of each, from winter, raises at most one
// alarm (the first "later" clock change, or the first Friday, before
// anything told the job's clock); read by UTC's days they raised 261 and
// 52. The table names every line and clock.
func TestCronSweep(t *testing.T) {
	lines := []string{"*/15 9-17 * * 1-5", "*/20 * * * 1-5"}
	clocks := [][2]string{{"America/Los_Angeles", "UTC"}, {"Europe/Berlin", "UTC"}}
	res, err := CronSweep(NewAuto(LiveEngine), lines, clocks, []string{"2026-01-07"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 4", len(res))
	}
	for _, r := range res {
		if r.Runs < 5000 {
			t.Errorf("%s on %s: %d runs in a year", r.Line, r.Clock, r.Runs)
		}
		if len(r.Alarms) > 1 {
			t.Errorf("%s on %s for %s: %d alarms in a year, want at most 1: %v", r.Line, r.Clock, r.BeetZone, len(r.Alarms), r.Alarms)
		}
	}
	var b bytes.Buffer
	if err := WriteCronSweep(&b, res, "go run ./cmd/detectjudge -cron-sweep"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `*/15 9-17 * * 1-5` |", "| `*/20 * * * 1-5` |", "America/Los_Angeles on UTC", "false alarms** in 4 cases"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, b.String())
		}
	}
}
