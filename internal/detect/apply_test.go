package detect

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestMaintenanceTeachesNothing: a burst during a maintenance window moves
// the beet's state like any events, but the learned rate for those hours
// stays what it was; the same burst outside a window is learned.
func TestMaintenanceTeachesNothing(t *testing.T) {
	b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	// Irregular gaps averaging every (from every/2 to 3every/2), so the
	// model learns a rate, not a schedule.
	feed := func(b *beet.Beet, from, to time.Time, every time.Duration, maintenance bool) {
		t.Helper()
		for i, at := 0, from; at.Before(to); i, at = i+1, at.Add(every/2+every*time.Duration(i*37%100)/100) {
			if _, err := ApplyEvents(b, beet.EventSpan{First: at, Last: at, Count: 1, Maintenance: maintenance}); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed(b, t0, t0.Add(10*24*time.Hour), 2*time.Minute, false) // 30 an hour
	if b.Status != beet.StatusUp {
		t.Fatalf("after 10 days: %s", b.Status)
	}
	start := t0.Add(10*24*time.Hour + 2*time.Hour) // 02:00, day 11
	quiet, learned := *b, *b
	feed(&quiet, t0.Add(10*24*time.Hour), start, 2*time.Minute, false)
	feed(&learned, t0.Add(10*24*time.Hour), start, 2*time.Minute, false)
	// Three hours at 10× the rate, then the usual rate for a day; the first
	// event after the window still counts as in it (its previous was).
	feed(&quiet, start, start.Add(3*time.Hour), 12*time.Second, true)
	feed(&quiet, start.Add(3*time.Hour), start.Add(3*time.Hour+time.Second), time.Minute, true)
	feed(&learned, start, start.Add(3*time.Hour+time.Second), 12*time.Second, false)
	for _, b := range []*beet.Beet{&quiet, &learned} {
		feed(b, start.Add(3*time.Hour+2*time.Minute), start.Add(24*time.Hour), 2*time.Minute, false)
	}
	expected := func(b *beet.Beet) float64 {
		m, err := LoadRateModel(b.Model, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		next := start.Add(24 * time.Hour) // 02:00 the next day
		return m.Expected(next, next.Add(time.Hour))
	}
	q, l := expected(&quiet), expected(&learned)
	if q < 20 || q > 45 {
		t.Errorf("after a maintenance burst, 02:00-03:00 expects %.1f events, want about 30 (unchanged)", q)
	}
	if l < q*1.5 {
		t.Errorf("a burst outside maintenance was not learned: %.1f expected, against %.1f with maintenance", l, q)
	}
}
