package detect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// skippingJob feeds a beet a job's runs every period from start until
// stop, each 5-30 s after its slot, skipping each run with probability
// skip (a job that pings only when a run had work).
func skippingJob(t *testing.T, a *autoBeet, start, stop time.Time, period time.Duration, skip float64, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for at := start; at.Before(stop); at = at.Add(period) {
		late := 5*time.Second + time.Duration(r.Int64N(int64(25*time.Second)))
		if r.Float64() >= skip {
			a.event(t, at.Add(late), 1)
		}
	}
}

// TestSkippedRunsLearned: a job every 5 min that skips 1 run in 100 at
// random was flagged at every skip, about 3 times a day for as long as it
// ran. Once skips recur (skipN) a single one passes; three weeks raise a
// few alarms in the first days, then almost none, and a stop is still
// flagged within 4 missed runs, saying that the job skips runs.
func TestSkippedRunsLearned(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	stop := start.AddDate(0, 0, 21)
	a := newAutoBeet("UTC")
	skippingJob(t, a, start, stop, 5*time.Minute, 0.01, 3)
	if n := len(alarms(a.since(start.AddDate(0, 0, 7)))); n > 3 {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("%d alarms in the last two weeks of a job skipping 1%% of its runs; want at most 3 (3 a day flagged every skip)", n)
	}
	n := len(a.flips)
	a.until(t, stop.Add(2*time.Hour))
	al := alarms(a.flips[n:])
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Sub(stop) > 4*5*time.Minute+2*time.Minute ||
		!strings.Contains(al[0].Reason, "runs in a row") || !strings.Contains(al[0].Reason, "it skips a run now and then") {
		logFlips(t, a.flips[n:], time.UTC)
		t.Fatalf("the stop: want one missed run within 4 runs and a grace, saying it skips runs")
	}
}

// TestOneMissedRunTeachesNoSkips: an hourly job that missed one run (a
// genuine failure) is flagged at its next missed run too, a week later:
// one miss is no evidence that runs are skipped at random.
func TestOneMissedRunTeachesNoSkips(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 7, 0, 0, time.UTC)
	missed := start.AddDate(0, 0, 10).Add(5 * time.Hour)
	stop := missed.AddDate(0, 0, 7)
	a := newAutoBeet("UTC")
	skippingJob(t, a, start, missed, time.Hour, 0, 1)
	skippingJob(t, a, missed.Add(time.Hour), stop, time.Hour, 0, 2)
	if al := alarms(a.since(missed)); len(al) != 1 || al[0].Kind != beet.FlipMissedRun {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("want the missed run flagged")
	}
	n := len(a.flips)
	a.until(t, stop.Add(90*time.Minute))
	if al := alarms(a.flips[n:]); len(al) != 1 || al[0].At.After(stop.Add(10*time.Minute)) || strings.Contains(al[0].Reason, "in a row") {
		logFlips(t, a.flips[n:], time.UTC)
		t.Fatalf("the stop the next day: want one missed run for the first run missing")
	}
}

// TestSkippedRunsWindowEnd: a job every 15 min from 09:00 to 17:00 on
// weekdays that skips runs and stops at 16:15, before the last slots of
// its day, is flagged that evening at its last slot, not the next morning
// once three runs in a row are missing.
func TestSkippedRunsWindowEnd(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, berlin)
	stop := time.Date(2026, 11, 25, 16, 15, 0, 0, berlin) // a Wednesday
	r := rand.New(rand.NewPCG(4, 2))
	a := newAutoBeet("Europe/Berlin")
	for day := start; day.Before(stop); day = day.AddDate(0, 0, 1) {
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		for at := day.Add(9 * time.Hour); at.Before(day.Add(17*time.Hour)) && at.Before(stop); at = at.Add(15 * time.Minute) {
			if r.Float64() >= 0.03 {
				a.event(t, at.Add(5*time.Second+time.Duration(r.Int64N(int64(20*time.Second)))), 1)
			}
		}
	}
	m, err := LoadRateModel(a.b.Model, berlin)
	if err != nil || m.skippedRuns() == 0 {
		t.Fatalf("skips not learned (%v): the test needs them", err)
	}
	n := len(a.flips)
	a.until(t, stop.Add(18*time.Hour))
	al := alarms(a.flips[n:])
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.After(stop.Add(time.Hour)) {
		logFlips(t, a.flips[n:], berlin)
		t.Fatalf("the stop at 16:15: want one missed run by 17:15")
	}
}

// TestOutagesTeachNoSkips: an hourly job whose host was down twice in a
// few days, missing 2 and then 3 runs, does not skip runs: its stop the
// next day is flagged at the first run missing. Counted as skips, the two
// outages let a missed run pass and the stop waited 1 h 6 min
// (u-cron-hourly-flaky).
func TestOutagesTeachNoSkips(t *testing.T) {
	start := time.Date(2026, 11, 2, 0, 7, 0, 0, time.UTC)
	down1 := start.AddDate(0, 0, 9).Add(13 * time.Hour)
	down2 := start.AddDate(0, 0, 11).Add(4 * time.Hour)
	stop := down2.AddDate(0, 0, 1)
	a := newAutoBeet("UTC")
	aroundOutages(start, stop, func(from, to time.Time, seed uint64) { skippingJob(t, a, from, to, time.Hour, 0, seed) },
		hostDown{down1, 2 * time.Hour}, hostDown{down2, 3 * time.Hour})
	if al := alarms(a.since(down1)); len(al) != 2 {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("%d alarms; want both outages flagged", len(al))
	}
	n := len(a.flips)
	a.until(t, stop.Add(3*time.Hour))
	if al := alarms(a.flips[n:]); len(al) != 1 || al[0].At.After(stop.Add(15*time.Minute)) || strings.Contains(al[0].Reason, "in a row") {
		logFlips(t, a.flips[n:], time.UTC)
		t.Fatalf("the stop the next day: want one missed run for the first run missing")
	}
}

// hostDown is an outage of a job's host: no event from at for length.
type hostDown struct {
	at     time.Time
	length time.Duration
}

// aroundOutages feeds events from start to stop with feed, none in the
// outages (in order), each stretch drawn from its own seed (1, 2, …).
func aroundOutages(start, stop time.Time, feed func(from, to time.Time, seed uint64), downs ...hostDown) {
	from := start
	for i, d := range downs {
		feed(from, d.at, uint64(i+1))
		from = d.at.Add(d.length)
	}
	feed(from, stop, uint64(len(downs)+1))
}
