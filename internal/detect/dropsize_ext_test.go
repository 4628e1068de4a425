package detect_test

import (
	"testing"
	"time"

	"github.com/beethq/beet/internal/detectjudge"
)

// TestSlowHoursNoDropNegbin50 replays the judge's `-seed 18` stream
// "negbin-50/drop to 30% 12h/8", generated rather than stored (67,000
// events). Its hours have a size of 7.9 and share a daily level, about 6
// together; the size learned 7.8-8.2 in the weeks before (the largest
// squares are clipped, SizeCap and the winsorising), and ten slow hours the
// morning after its incident (1, 2, 4, 9, 14, 8, 18, 12, 32, 15 where 10-82
// were learned) raised a drop at 12:31 on Mar 12. The drop test now takes
// Params.DropSizeShare of the size; the incident is still flagged.
func TestSlowHoursNoDropNegbin50(t *testing.T) {
	if testing.Short() {
		t.Skip("replays eight weeks at 50 events an hour")
	}
	s, err := detectjudge.StreamByName(18, "negbin-50/drop to 30% 12h/8")
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
