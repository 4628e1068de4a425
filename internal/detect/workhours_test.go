package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestWorkhoursStrayLateRun: a job every 15 min from 09:00 to 16:45 on
// weekdays, Sydney time (the judge's `-seed 12 -dump 'cron-workhours/late
// run/11'`), stops one afternoon and sends one run at 22:47. That run sits
// on the 15-minute grid, so it widened the learned window to 22:45: every
// working day after, the 17:00 slot was flagged as a missed run (18 false
// alarms). One run outside the window, apart from any other, now leaves
// the window as it was: the outage is flagged, and nothing after.
func TestWorkhoursStrayLateRun(t *testing.T) {
	s := readDump(t, "testdata/workhours-late-run-sydney.csv")
	loc, _ := time.LoadLocation(s.zone)
	a := s.replay(t, 6*time.Hour)
	var after []beet.Flip
	for _, f := range alarms(a.flips) {
		if !f.At.Before(s.end) {
			after = append(after, f)
		}
	}
	if len(after) != 0 {
		for _, f := range after {
			t.Logf("  %s %s: %s", f.At.In(loc), f.Kind, f.Reason)
		}
		t.Fatalf("%d alarms after the late run of %s", len(after), s.end.In(loc))
	}
	if al := alarms(a.flips); len(al) == 0 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(s.start) {
		t.Errorf("the outage from %s was not flagged as a missed run", s.start.In(loc))
	}
	if w, _ := Watch(&a.b); !strings.Contains(w.Description, " to 16:45 weekdays") {
		t.Errorf("the working day's end moved: %s", w.Description)
	}
}
