package detect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestSurgeSpikesOneIncident: a beet that reports its count every five
// minutes, about 10 each (120 an hour), surges: an hour at six times
// normal, an ordinary hour, then a spike of 150 in one report ten minutes
// into the next hour (NAB's AAPL tweets, Mar 4: 1458 at 19:02, 2300 at
// 20:07). That is one incident. The ordinary hour brought the surge
// CUSUM back to 0, and the first report of the next hour recovered the
// surge; the spike five minutes later raised it again, paging twice. A
// surge now ends only after a whole closed hour at 0 (surgeOver), and it
// still ends once the rate has been normal that long.
func TestSurgeSpikesOneIncident(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 4))
	a := newAutoBeet("UTC")
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	report := func(n int) {
		a.event(t, at, n)
		at = at.Add(5 * time.Minute)
	}
	for at.Before(t0.Add(14 * 24 * time.Hour)) {
		report(poissonCount(r, 10))
	}
	if a.b.Status != beet.StatusUp {
		t.Fatalf("%s after two weeks: %+v", a.b.Status, a.flips)
	}
	surge := at
	for range 12 {
		report(poissonCount(r, 60))
	}
	for range 12 {
		report(poissonCount(r, 10))
	}
	report(10)
	report(10)
	report(150) // ten minutes into the hour after the ordinary one
	for range 6*12 - 3 {
		report(poissonCount(r, 10))
	}
	assertOneSurge(t, a, surge)
}

// TestSurgeOpenWhileElevated: the same beet surges to six times normal for
// an hour, stays at 1.6 times normal for four hours, surges again for an
// hour and then is normal (NAB's FB tweets, Apr 22: 4×, 1.6×, 1.6×, 2.4×,
// 7×). Against a threefold surge a 1.6× hour is evidence of normal, so the
// surge ended during the 1.6× hours ("back to normal") and the second
// peak raised a new one. An hour nearer halfway to the surge than to
// normal now gives an open surge no evidence against it (surgeHeld).
func TestSurgeOpenWhileElevated(t *testing.T) {
	f := afterTwoWeeks(t, 5, 0)
	surge := f.at
	f.hours(1, 60)
	f.hours(4, 16)
	f.hours(1, 60)
	f.hours(5, 10)
	assertOneSurge(t, f.a, surge)
}

// hourFeeder reports to an auto beet every 5 minutes, a Poisson count of
// at least floor events a report.
type hourFeeder struct {
	t     *testing.T
	a     *autoBeet
	r     *rand.Rand
	at    time.Time
	floor int
}

// afterTwoWeeks is a UTC beet fed two ordinary weeks at 10 events a
// report, up by then.
func afterTwoWeeks(t *testing.T, seed uint64, floor int) *hourFeeder {
	t.Helper()
	f := &hourFeeder{t: t, a: newAutoBeet("UTC"), r: rand.New(rand.NewPCG(12, seed)),
		at: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), floor: floor}
	f.hours(14*24, 10)
	if f.a.b.Status != beet.StatusUp {
		t.Fatalf("%s after two weeks: %+v", f.a.b.Status, f.a.flips)
	}
	return f
}

// hours feeds n hours at perReport events a report on average.
func (f *hourFeeder) hours(n int, perReport float64) {
	for range 12 * n {
		f.a.event(f.t, f.at, max(f.floor, poissonCount(f.r, perReport)))
		f.at = f.at.Add(5 * time.Minute)
	}
}

// assertOneSurge checks that the flips since surge raised one surge alarm,
// and that the beet is up again at the end.
func assertOneSurge(t *testing.T, a *autoBeet, surge time.Time) {
	t.Helper()
	raised := 0
	for _, f := range a.since(surge) {
		t.Logf("%s %s→%s %s: %s", f.At.Format(time.DateTime), f.From, f.To, f.Kind, f.Reason)
		if f.To == beet.StatusAnomalous {
			raised++
		}
	}
	if raised != 1 {
		t.Errorf("%d surge alarms for one incident, want 1", raised)
	}
	if a.b.Status != beet.StatusUp {
		t.Errorf("%s after five ordinary hours, want up", a.b.Status)
	}
}

// TestSurgeThenDropOneIncident: the same beet surges to six times normal
// for an hour, then falls to a tenth of normal for three hours, then is
// normal again (NAB's nyc_taxi, Labor Day: the night before busy as a
// Saturday's, the morning without its rush hour). The surge ended at the
// first event after a calm hour, "back to normal" while the rate was a
// tenth of it, and the drop was raised an hour later: one swing paged
// twice. A surge now ends only when the rate is back to normal, not below
// it (surgeOver); the beet stays anomalous through the low hours and
// recovers once they are over.
func TestSurgeThenDropOneIncident(t *testing.T) {
	f := afterTwoWeeks(t, 6, 1)
	a, surge := f.a, f.at
	f.hours(1, 60)
	f.hours(3, 1)
	f.hours(5, 10)
	raised := 0
	for _, f := range a.since(surge) {
		t.Logf("%s %s→%s %s: %s", f.At.Format(time.DateTime), f.From, f.To, f.Kind, f.Reason)
		if f.To == beet.StatusAnomalous || f.To == beet.StatusDown {
			raised++
		}
	}
	if raised != 1 {
		t.Errorf("%d alarms for one surge that swung below normal, want 1", raised)
	}
	if a.b.Status != beet.StatusUp {
		t.Errorf("%s after five ordinary hours, want up", a.b.Status)
	}
}
