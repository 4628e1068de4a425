package detect

import (
	"testing"
	"time"
)

// TestSlowHoursNoDropNegbin5 replays the first four days of the judge's
// `-seed 18 -dump "negbin-5/outage 1h/8"` (negative-binomial hours of size
// 8.4 and a daily level; its outage comes weeks later). The size had
// learned 10-12 from its first days' squares, about twice the 6 the hours
// and the daily level make together, and six slow hours on Wednesday
// afternoon (1, 2, 1, 1, 2, 0 where 4-14 were learned) raised a drop at
// 17:51. The drop test now takes Params.DropSizeShare of the size.
func TestSlowHoursNoDropNegbin5(t *testing.T) {
	s := readDump(t, "testdata/negbin-heavy-tail-slow-hours.csv")
	a := newAutoBeet(s.zone)
	for _, at := range s.events {
		a.event(t, at, 1)
	}
	a.until(t, s.events[len(s.events)-1].Add(time.Minute))
	for _, al := range alarms(a.flips) {
		t.Errorf("%s alarm on normal traffic at %s (%s)", al.Kind, al.At, al.Reason)
	}
}
