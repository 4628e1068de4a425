package detect

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// levelDays feeds days of negative-binomial traffic from h (50 an hour,
// size 5), each day at its own level, Gamma of shape 30 (a CV of 18%, as
// the judge's negbin families), and returns the hour after the last.
func (a *autoBeet) levelDays(t *testing.T, r *rand.Rand, h time.Time, days int) time.Time {
	for range days {
		h = a.negbinHours(t, r, h, 24, 50, gammaDraw(r, 30)/30, 5)
	}
	return h
}

// TestSlowDayIsNoDrop: on traffic whose days vary in level as well as its
// hours, a whole day at 45% of the usual level is a slow day, not a drop:
// every hour is read against the level the day's hours before it showed
// (daylevel.go). Of 30 such days at most 3 are flagged (2 are); read at
// the usual rates, 9 were.
func TestSlowDayIsNoDrop(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	flagged := 0
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed+1, 28))
		a := newAutoBeet("UTC")
		slow := a.levelDays(t, r, t0, 21)
		if a.b.Status != beet.StatusUp {
			t.Fatalf("beet %d: %s after three weeks: %+v", seed, a.b.Status, a.flips)
		}
		a.negbinHours(t, r, slow, 24, 50, 0.45, 5)
		for _, f := range a.since(slow) {
			t.Logf("beet %d: %s: %s", seed, f.Kind, f.Reason)
			if f.To != beet.StatusUp {
				flagged++
			}
		}
	}
	if flagged > 3 {
		t.Fatalf("%d of 30 slow days flagged", flagged)
	}
}

// TestDropAfterUsualMorningFound: the day's level does not explain a drop
// away. After a usual morning, the rate falls to 20% for the rest of the
// day: the hours of the drop's run do not teach the level (levelHeld), and
// it is flagged on every one of six beets within 11 hours (5-10 h; when
// the drop's hours taught the level, one took 13 h).
func TestDropAfterUsualMorningFound(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed+1, 29))
		a := newAutoBeet("UTC")
		day := a.levelDays(t, r, t0, 21)
		drop := a.negbinHours(t, r, day, 10, 50, 1, 5)
		a.negbinHours(t, r, drop, 14, 50, 0.2, 5)
		found := false
		for _, f := range a.since(drop) {
			t.Logf("beet %d: %s at %s: %s", seed, f.Kind, f.At.Sub(drop), f.Reason)
			found = found || f.To == beet.StatusAnomalous && f.Kind == beet.FlipDrop && f.At.Sub(drop) <= 11*time.Hour
		}
		if !found {
			t.Errorf("beet %d: the drop was not flagged within 11 h", seed)
		}
	}
}

// TestDropReadAtKnownLevel: once the day's hours have taught its level,
// what is left of the days' variance in the learned size is the level's
// own uncertainty (levelSize). After a usual morning of 9 hours the rate
// falls to 30% for the rest of the day (the judge's drops, on its negbin
// traffic: size 5, days of CV 18%). Read with the whole days' variance on
// top of the level the morning showed, 20 beets were flagged after a median
// of 12 h 13 min (13 within 15 h); now after 11 h 19 min (15).
func TestDropReadAtKnownLevel(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var took []time.Duration
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed+1, 30))
		a := newAutoBeet("UTC")
		day := a.levelDays(t, r, t0, 21)
		drop := a.negbinHours(t, r, day, 9, 50, gammaDraw(r, 30)/30, 5)
		a.negbinHours(t, r, drop, 15, 50*0.3, 1, 5)
		d := 24 * time.Hour // not flagged
		for _, f := range a.since(drop) {
			if f.To == beet.StatusAnomalous && f.Kind == beet.FlipDrop {
				d = min(d, f.At.Sub(drop))
			}
		}
		took = append(took, d)
	}
	if m := median(took); m > 11*time.Hour+30*time.Minute {
		t.Fatalf("drops flagged after a median of %s, want at most 11 h 30 min: %v", m, took)
	}
}

// TestLevelsLearnedOnSlowBeet: the days' variance is learned from the
// hours that taught each day's level. On a beet of 5 events an hour
// (size 5), about 4 hours in 10 close with a CUSUM at levelHoldNats or
// more and teach nothing; counted as if they had, they held each day's
// level near 1, and five beets learned the days' CV at 0.03-0.13 (median
// 0.09) where it is 0.18 (the judge's negbin families); now 0.15-0.26.
func TestLevelsLearnedOnSlowBeet(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var cvs []float64
	for seed := range uint64(5) {
		r := rand.New(rand.NewPCG(seed+1, 31))
		a := newAutoBeet("UTC")
		h := t0
		for range 42 {
			h = a.negbinHours(t, r, h, 24, 5, gammaDraw(r, 30)/30, 5)
		}
		m, err := LoadRateModel(a.b.Model, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		cvs = append(cvs, float64(m.levelCV))
	}
	slices.Sort(cvs)
	if cv := cvs[len(cvs)/2]; cv < 0.1 || cv > 0.3 {
		t.Fatalf("days' CV learned at a median of %.2f (%.2f), want 0.18 or so", cv, cvs)
	}
	t.Logf("days' CV learned: %.3f", cvs)
}

// TestSmoothBeetReadsDayLevel: negative-binomial traffic of 5 an hour and
// size 7.7, whose days vary by 18% (the judge's `-seed 101 -streams 36
// -clean 72 -dump negbin-5/clean/8` and `clean/16`), has hourly counts of
// D 1.4-2.3, mostly under 2: not overdispersed. Its drops were read
// against the usual rates then, and a slow day's afternoon was flagged in
// both eight-week streams ("Only 5 events since Apr 24 13:00 AEST (4 h 31
// min), where about 29 were expected"). Read at the day's level, neither
// raises an alarm.
func TestSmoothBeetReadsDayLevel(t *testing.T) {
	for _, path := range []string{"testdata/negbin-5-slow-day-8.csv", "testdata/negbin-5-slow-day-16.csv"} {
		s := readDump(t, path)
		for _, f := range alarms(s.replay(t, time.Minute).flips) {
			t.Errorf("%s: %s at %s: %s", path, f.Kind, f.At, f.Reason)
		}
	}
}

// trendBeet feeds a Poisson beet of perHour events an hour in UTC whose
// rate grows by the factor grow over eight weeks (a shrinking beet's is
// under 1), times factor from 14:17 on day days, and returns its first
// alarm since then and how long after it came. Alarms before the change
// fail the test: the trend alone must raise nothing.
func trendBeet(t *testing.T, seed uint64, perHour, grow, factor float64, days int, span time.Duration) (*beet.Flip, time.Duration) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed+1, 31))
	a := newAutoBeet("UTC")
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	change := t0.Add(time.Duration(days)*24*time.Hour + 14*time.Hour + 17*time.Minute)
	perDay := math.Log(grow) / 56
	for at := t0; !at.After(change.Add(span)); {
		rate := perHour * math.Exp(perDay*at.Sub(t0).Hours()/24)
		if !at.Before(change) {
			rate *= factor
		}
		next := at.Add(time.Duration(r.ExpFloat64() / rate * float64(time.Hour)))
		if at.Before(change) && !next.Before(change) {
			if al := alarms(a.flips); len(al) > 0 {
				t.Fatalf("grow %v, seed %d: %s before the change: %s", grow, seed, al[0].Kind, al[0].Reason)
			}
			next = change // the gap is memoryless: draw the next one at the new rate
		} else {
			a.event(t, next, 1)
			if al := alarms(a.since(change)); len(al) > 0 {
				return &al[0], al[0].At.Sub(change)
			}
		}
		at = next
	}
	a.until(t, change.Add(span))
	if al := alarms(a.since(change)); len(al) > 0 {
		return &al[0], al[0].At.Sub(change)
	}
	return nil, 0
}

// TestTrendingBeetSurgeFound: a beet of 20 events an hour that grows to
// twice that over eight weeks, or shrinks to half, surges threefold on day
// 42. Growing, the surge is flagged within 40 minutes (a CUSUM that knows
// the rates needs about 20); shrinking, within 2 hours (it needs about
// 56 minutes). When each rate lagged the trend alone, the growing beet
// read as overdispersed and took 46-79 minutes, and the shrinking one's
// higher normal hid 7 of 12 surges for 3 hours; neither raised anything
// before its surge, nor does it now.
func TestTrendingBeetSurgeFound(t *testing.T) {
	for _, c := range []struct {
		grow   float64
		within time.Duration
	}{{2, 40 * time.Minute}, {0.5, 2 * time.Hour}} {
		soon := 0
		for seed := range uint64(12) {
			f, after := trendBeet(t, seed, 20, c.grow, 3, 42, 3*time.Hour)
			if f != nil && f.Kind == beet.FlipSurge && after <= c.within {
				soon++
			}
			t.Logf("grow %v, seed %d: %v", c.grow, seed, after.Round(time.Second))
		}
		if soon < 11 {
			t.Errorf("grow %v: %d of 12 surges flagged within %v, want 11", c.grow, soon, c.within)
		}
	}
}
