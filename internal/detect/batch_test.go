package detect

import (
	"math/rand/v2"
	"slices"
	"strings"
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
// after 3 h 56 min. Each is a schedule: nothing is flagged in its life
// until it stops (recognised from its first runs, batchOnly: until then,
// a false surge and silence on days 7-9), and the stop at the next run's
// time.
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
			slot := a.batchRuns(t, r, start.Add(2*time.Hour+5*time.Minute), stop, c.period, c.least, c.most, c.span)
			a.until(t, slot.Add(c.period))
			al := alarms(a.flips)
			if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(stop) || al[0].At.Sub(slot) > c.within {
				logFlips(t, a.flips, berlin)
				t.Fatalf("%d alarms; want one missed run within %s of %s", len(al), c.within, slot.Format("Jan 2 15:04"))
			}
		})
	}
}

// TestSurgeWhereNoneAreExpected: a nightly billing run whose run on day
// 21 came 11 h late (its host was down until the afternoon): its items, at
// an hour that never has events, are a surge "at a time that almost never
// has any", not "where about 0.0 were expected (9334389114.2× normal)".
func TestSurgeWhereNoneAreExpected(t *testing.T) {
	start := time.Date(2026, 9, 7, 2, 5, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(21, 11))
	a := newAutoBeet("UTC")
	late := start.AddDate(0, 0, 21)
	a.batchRuns(t, r, start, late.Add(-time.Hour), 24*time.Hour, 200, 600, 15*time.Minute)
	a.batchRuns(t, r, late.Add(11*time.Hour), late.Add(11*time.Hour), 24*time.Hour, 200, 600, 15*time.Minute)
	a.until(t, late.Add(12*time.Hour))
	for _, f := range alarms(a.flips) {
		if f.Kind == beet.FlipSurge {
			if !strings.Contains(f.Reason, "at a time that almost never has any.") || strings.Contains(f.Reason, "normal") {
				t.Errorf("surge: %q; want it said without a ratio to nothing", f.Reason)
			}
			return
		}
	}
	logFlips(t, a.flips, time.UTC)
	t.Fatal("the late run's items raised no surge")
}

// batchRuns feeds a beet a batch job's runs every period from first until
// stop, each least to most events at random within span after its slot,
// and returns the first slot after stop.
func (a *autoBeet) batchRuns(t *testing.T, r *rand.Rand, first, stop time.Time, period time.Duration, least, most int, span time.Duration) time.Time {
	run := first
	for ; !run.After(stop); run = run.Add(period) {
		var items []time.Time
		for range least + r.IntN(most-least+1) {
			items = append(items, run.Add(5*time.Second+time.Duration(r.Int64N(int64(span)))))
		}
		slices.SortFunc(items, time.Time.Compare)
		for _, at := range items {
			a.event(t, at, 1)
		}
	}
	return run
}

// TestBatchJobWatchedFromItsFirstRuns: a batch job is recognised from its
// first runs, as a job pinging once a run is (batchOnly): a nightly billing
// run stopped after its 3rd run is flagged at its 4th run's time plus its
// young grace, and an hourly sync stopped on its second day within
// minutes. Both were left to their rates until their calendar was known:
// the nightly one flagged by the learning guard after 9 days 22 h, the
// hourly one after 9 h 50 min.
func TestBatchJobWatchedFromItsFirstRuns(t *testing.T) {
	start := time.Date(2026, 9, 7, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name         string
		period       time.Duration
		least, most  int
		span, within time.Duration
		runs         int
	}{
		{"hourly sync", time.Hour, 20, 80, 150 * time.Second, 10 * time.Minute, 30},
		{"nightly billing", 24 * time.Hour, 200, 600, 15 * time.Minute, 2*time.Hour + 30*time.Minute, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.period), 5))
			a := newAutoBeet("UTC")
			first := start.Add(2*time.Hour + 5*time.Minute)
			slot := a.batchRuns(t, r, first, first.Add(time.Duration(c.runs-1)*c.period), c.period, c.least, c.most, c.span)
			a.until(t, slot.Add(c.period))
			if al := alarms(a.flips); len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(slot) || al[0].At.Sub(slot) > c.within {
				logFlips(t, a.flips, time.UTC)
				t.Fatalf("%d alarms; want one missed run within %s of %s", len(al), c.within, slot.Format("Jan 2 15:04"))
			}
		})
	}
}
