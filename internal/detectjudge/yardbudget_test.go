package detectjudge

import (
	"testing"
	"time"
)

// yardstickAlarms runs a yardstick over a whole clean stream, restarting it
// after each alarm, and returns how many alarms it raised.
func yardstickAlarms(s Stream, kind string, factor float64) int {
	m := s.model.(*rateModel)
	n := 0
	for from := s.Info.Start.Add(24 * time.Hour); ; {
		inc := &Incident{Spec: IncidentSpec{Kind: kind}, Start: from, End: s.End.Add(-DetectTolerance), Factor: factor}
		m.yardstick(s.Traffic, s.Info.Start, inc)
		if inc.YardAt.IsZero() {
			return n
		}
		n++
		from = inc.YardAt.Add(time.Second)
		if kind == IncidentOutage { // the silence ends at the next arrival
			for _, a := range m.arr {
				if a > inc.YardAt.UnixNano() {
					from = time.Unix(0, a)
					break
				}
			}
		}
	}
}

// TestYardsticksKeepTheBudget: on clean traffic the yardsticks raise about
// as few false alarms as the budget allows (0.5 per 1000 beet-days: about
// 0.3 over the 550 days of each family here; a handful would mean a threshold is wrong).
func TestYardsticksKeepTheBudget(t *testing.T) {
	for _, name := range []string{"poisson-20", "negbin-5", "negbin-50", "bursty-3", "u-checkout-holiday-50", "u-webhook-nightly-quiet-10"} {
		f := family(t, name)
		days, alarms := 0.0, map[string]int{}
		for i := 0; i < 10; i++ {
			s, err := f.CleanStream(1, i)
			if err != nil {
				t.Fatal(err)
			}
			days += s.End.Sub(s.Info.Start).Hours()/24 - 1
			alarms["silence"] += yardstickAlarms(s, IncidentOutage, 0)
			alarms["drop to 30%"] += yardstickAlarms(s, IncidentDrop, 0.3)
			alarms["surge ×3"] += yardstickAlarms(s, IncidentSurge, 3)
		}
		for k, n := range alarms {
			if n > 3 {
				t.Errorf("%s: the %s yardstick raised %d false alarms in %.0f clean beet-days", name, k, n, days)
			}
		}
		t.Logf("%s: %v in %.0f clean beet-days", name, alarms, days)
	}
}
