package detect

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestAboutOneADayAtRandom: a quiet webhook, a Poisson number of events a
// day (mean 1) at random times between 08:00 and 22:00, in 150 streams of
// 42 days (6,300 beet-days, the judge's u-sparse-1-a-day, which raised
// about 3 false alarms per 1000 beet-days on the tuning seeds). Such a
// beet has no silence a watch could tell from chance in a week, so
// anything it raises is false. Missed runs: its days with one event pass
// for a daily job delayed at random, and the day with none after was a
// missed run; days with two are now stray pings that drop the schedule
// (strayPing): 30 missed runs and a "runs too often" before, 11 now (16
// without strayPing; most of the rest are three events at one time of day
// on three days, a daily job's first runs). Silences: until the rate model
// arms (30 events), the fallback flagged twice the longest gap, which n
// random gaps pass once in (n+1)(n+2)/2; their limit is now what random
// gaps pass once in 5000 days (randomLimit): 9 without it, 6 with (5 are
// the learning guard's on days 2-3, after a first day's events came
// within a few hours).
func TestAboutOneADayAtRandom(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 9, 7, 0, 0, 0, 0, berlin)
	kinds := map[beet.FlipKind]int{}
	for i := range uint64(150) {
		r := rand.New(rand.NewPCG(13, i))
		a := newAutoBeet("Europe/Berlin")
		for d := range 42 {
			n := poisson(r, 1)
			at := make([]time.Duration, n)
			for j := range at {
				at[j] = 8*time.Hour + time.Duration(r.Int64N(int64(14*time.Hour)))
			}
			slices.Sort(at)
			for _, h := range at {
				a.event(t, start.AddDate(0, 0, d).Add(h), 1)
			}
		}
		a.until(t, start.AddDate(0, 0, 42))
		for _, f := range alarms(a.flips) {
			kinds[f.Kind]++
			t.Logf("stream %d, day %d: %s", i, int(f.At.Sub(start).Hours()/24), f.Reason)
		}
	}
	t.Logf("alarms by kind: %v", kinds)
	if kinds[beet.FlipMissedRun] > 12 || kinds[beet.FlipSilence] > 7 || kinds[beet.FlipTooOften] > 0 {
		t.Errorf("%v false alarms in 150 streams of 42 days, want at most 12 missed runs, 7 silences, no runs too often", kinds)
	}
}

// TestRandomGapsFallbackLimit: 20 events at random times over 16 days
// (too few for the rate model), whose longest gap happens to be under 2
// days: the fallback says the events came at random times and waits for
// a silence random gaps pass once in 5000 days (about 8 days), not twice
// the longest gap (3 days 10 h).
func TestRandomGapsFallbackLimit(t *testing.T) {
	start := time.Date(2026, 9, 7, 10, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(2, 9))
	a := newAutoBeet("UTC")
	at := start
	var longest time.Duration
	for range 20 {
		gap := time.Duration(r.ExpFloat64() * float64(18*time.Hour))
		longest = max(longest, gap)
		at = at.Add(gap)
		a.event(t, at, 1)
	}
	if end := start.Add(15 * 24 * time.Hour); at.Before(end) {
		at = end
		a.event(t, at, 1)
	}
	w, _ := Watch(&a.b)
	t.Logf("longest gap %s; %s", longest, w.Description)
	if a.b.DueAt == nil || a.b.DueAt.Sub(at) < 4*longest || !strings.Contains(w.Description, "came at random times") {
		t.Errorf("want the fallback's random limit (over 4 times the longest gap, said so), got a deadline at %v (last event %s): %s", a.b.DueAt, at, w.Description)
	}
}

// poisson draws a Poisson count of mean mu (Knuth's product of uniforms).
func poisson(r *rand.Rand, mu float64) int {
	l, k, p := math.Exp(-mu), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
