package detect

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestBatchJobIsASchedule: a job that pings once per item it processed
// (an hourly sync's 20-80 records over 2 min 30 s, a nightly billing
// run's 200-600 invoices over 15 min) runs on a schedule whose runs are
// clusters of many events. Taken for a stream of counts, it was watched
// by its rates: the nightly run raised a false surge and a false silence
// in its hour every day, and the hourly one's stop on day 12 was flagged
// after 3 h 56 min. By its 10th day each is a schedule: nothing is
// flagged until it stops, and the stop at the next run's time.
func TestBatchJobIsASchedule(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 9, 7, 0, 0, 0, 0, berlin)
	for _, c := range []struct {
		name         string
		period       time.Duration
		least, most  int
		span, within time.Duration
	}{
		{"hourly sync", time.Hour, 20, 80, 150 * time.Second, 10 * time.Minute},
		{"nightly billing", 24 * time.Hour, 200, 600, 15 * time.Minute, 10 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.period), 3))
			a := newAutoBeet("Europe/Berlin")
			stop := start.AddDate(0, 0, 12).Add(13 * time.Hour)
			var slot time.Time // the first run after the stop
			for run := start.Add(2*time.Hour + 5*time.Minute); ; run = run.Add(c.period) {
				if run.After(stop) {
					slot = run
					break
				}
				var items []time.Time
				for range c.least + r.IntN(c.most-c.least+1) {
					items = append(items, run.Add(5*time.Second+time.Duration(r.Int64N(int64(c.span)))))
				}
				slices.SortFunc(items, time.Time.Compare)
				for _, at := range items {
					a.event(t, at, 1)
				}
			}
			a.until(t, slot.Add(c.period))
			settled := start.AddDate(0, 0, 10)
			al := alarms(a.since(settled))
			if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(stop) || al[0].At.Sub(slot) > c.within {
				logFlips(t, a.since(settled), berlin)
				t.Fatalf("from day 10: %d alarms; want one missed run within %s of %s", len(al), c.within, slot.Format("Jan 2 15:04"))
			}
		})
	}
}
