package detect_test

import (
	"testing"
	"time"
)

// TestFlatTrafficDropAfterClockChange replays a stream of the judge's
// negbin-50 family (tuning seed 1: negative-binomial hours of about 50 an
// hour in Berlin, a broad daily bump) that drops to 30% for 12 hours on
// March 12, four days after America's clocks moved. While a candidate
// zone's change is followed, each window is read at the lower of its
// hour's rate and its neighbour's. This beet's neighbouring hours differ
// by less than their noise (dailyShape): they name no clock, and the lower
// of two noisy rates only slowed the drop's evidence, so it went
// unflagged. A rate-knowing CUSUM flags it after 10 hours.
func TestFlatTrafficDropAfterClockChange(t *testing.T) {
	s, alarms := replayJudgeStream(t, 1, "negbin-50/drop to 30% 12h/20")
	inc := s.Incidents[0]
	for _, a := range alarms {
		if !a.Recovery && a.Kind == "drop" && !a.At.Before(inc.Start) && a.At.Before(inc.End.Add(time.Hour)) {
			return
		}
	}
	t.Errorf("drop from %s to %s not flagged; alarms: %v", inc.Start, inc.End, alarms)
}
