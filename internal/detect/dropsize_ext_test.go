package detect_test

import (
	"testing"
	"time"

	"github.com/beethq/beet/internal/detectjudge"
)

// TestSlowHoursNoDropNegbin50 replays the judge's `-seed 18` stream
// "negbin-50/drop to 30% 12h/0" (hours of size 3.0 around 50 an hour),
// generated rather than stored (60,000 events). Its learned size wandered
// between 3 and 5 in the weeks before; at 4.9 an afternoon of slow hours
// on Thursday Mar 19 (3, 7, 28, 39, 11, 9 where 44-93 were learned) raised
// a drop at 22:07, five days before the incident, which is still found.
func TestSlowHoursNoDropNegbin50(t *testing.T) {
	if testing.Short() {
		t.Skip("replays eight weeks at 50 events an hour")
	}
	s, err := detectjudge.StreamByName(18, "negbin-50/drop to 30% 12h/0")
	if err != nil {
		t.Fatal(err)
	}
	alarms, err := detectjudge.Replay(detectjudge.NewAuto(detectjudge.LiveEngine)(s.Info), s.Events, s.End)
	if err != nil {
		t.Fatal(err)
	}
	inc := s.Incidents[0]
	found := false
	for _, a := range alarms {
		if a.Recovery {
			continue
		}
		if a.At.Before(inc.Start) || a.At.After(inc.End.Add(detectjudge.DetectTolerance)) {
			t.Errorf("%s alarm outside the incident at %s", a.Kind, a.At.In(s.Info.Location).Format(time.RFC3339))
			continue
		}
		found = true
	}
	if !found {
		t.Errorf("the drop to 30%% from %s was not flagged", inc.Start)
	}
}
