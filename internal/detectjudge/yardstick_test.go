package detectjudge

import (
	"math"
	"testing"
	"time"
)

// flatRate is a Poisson source at perHour every hour of every day, with
// the given arrivals (as generate would have recorded them).
func flatRate(perHour float64, arrivals []time.Time) *rateModel {
	m := &rateModel{perHour: perHour}
	for h := range m.hour {
		m.hour[h] = 1
	}
	for d := range m.dow {
		m.dow[d] = 1
	}
	for _, t := range arrivals {
		m.arr = append(m.arr, t.UnixNano())
	}
	return m
}

// every returns the instants from, from+step, … before to.
func every(from, to time.Time, step time.Duration) []time.Time {
	var ts []time.Time
	for t := from; t.Before(to); t = t.Add(step) {
		ts = append(ts, t)
	}
	return ts
}

func nearTime(got, want time.Time, tol time.Duration) bool {
	d := got.Sub(want)
	return d <= tol && d >= -tol
}

// The threshold of a stream of 60 arrivals an hour: ln(1440 / 0.0005).
var ln2880000 = math.Log(1440 / YardstickBudget)

// TestSilenceOracleTimeToDetect: one arrival a minute until 09:59, then an
// outage from 10:00. The oracle flags the silence once P(no arrival since
// 09:59) = e^(−minutes) falls to 0.0005/1440, ln(2.88e6) = 14.87 minutes
// after 09:59: at 10:13:52, 13 min 52 s into the outage.
func TestSilenceOracleTimeToDetect(t *testing.T) {
	loc := time.UTC
	start := at("00:00")
	inc := &Incident{Spec: IncidentSpec{Kind: IncidentOutage}, Start: at("10:00"), End: at("14:00")}
	m := flatRate(60, append(every(start, at("10:00"), time.Minute), every(at("14:00"), at("18:00"), time.Minute)...))
	m.yardstick(loc, start, inc)
	want := at("09:59").Add(time.Duration(ln2880000 * float64(time.Minute)))
	if inc.Yardstick != YardOracle || !nearTime(inc.YardAt, want, time.Second) {
		t.Fatalf("oracle %q at %s, want %s", inc.Yardstick, inc.YardAt.Format(time.TimeOnly), want.Format(time.TimeOnly))
	}
	o := ScoreIncident("f", *inc, []Alarm{{At: at("10:30"), Kind: KindSilence}})
	if !o.YardFound || !nearTime(at("10:00").Add(o.YardTTD), want, time.Second) || math.Abs(o.Ratio()-30/(ln2880000-1)) > 0.01 {
		t.Errorf("outcome %+v, ratio %.3f", o, o.Ratio())
	}

	// A silence that ends (an arrival at 10:10) before it is rare enough is
	// not found.
	short := &Incident{Spec: IncidentSpec{Kind: IncidentOutage}, Start: at("10:00"), End: at("10:10")}
	m = flatRate(60, append(every(start, at("10:00"), time.Minute), every(at("10:10"), at("18:00"), time.Minute)...))
	m.yardstick(loc, start, short)
	if !short.YardAt.IsZero() {
		t.Errorf("a 10-minute silence flagged at %s", short.YardAt)
	}
	// Nor is one after fewer than minRunsBefore arrivals.
	early := &Incident{Spec: IncidentSpec{Kind: IncidentOutage}, Start: at("10:00"), End: at("14:00")}
	m = flatRate(60, []time.Time{at("09:58"), at("09:59"), at("14:00")})
	m.yardstick(loc, start, early)
	if !early.YardAt.IsZero() {
		t.Errorf("a silence after 2 arrivals flagged at %s", early.YardAt)
	}
}

// TestSilenceProbabilityOfOverdispersedSources checks ln P(no arrival)
// against closed forms: hidden hourly levels Gamma(r)/r give
// (1 + μ/r)^(−r) an hour; a daily level Gamma(s)/s on a Poisson count of
// mean c gives (1 + c/s)^(−s).
func TestSilenceProbabilityOfOverdispersedSources(t *testing.T) {
	m := flatRate(50, nil)
	m.nbShape = 2
	got := m.logSilence(time.UTC, at("00:00"), at("01:00"), at("04:00"))
	if want := -3 * 2 * math.Log1p(50.0/2); math.Abs(got-want) > 1e-9 {
		t.Errorf("hourly levels: %g, want %g", got, want)
	}
	m = flatRate(5, nil)
	m.dayShape = 30
	got = m.logSilence(time.UTC, at("01:00"), at("01:00"), at("02:00"))
	if want := -30 * math.Log1p(5.0/30); math.Abs(got-want) > 1e-4 {
		t.Errorf("daily level: %g, want %g", got, want)
	}
	if got := logGammaMean(30, func(d float64) float64 { return -5 * d }); math.Abs(got+30*math.Log1p(5.0/30)) > 1e-4 {
		t.Errorf("E[exp(−5D)] = e^%g", got)
	}
}

// TestCUSUMTimeToDetect runs the CUSUM on step changes it can be followed
// through by hand. Normal: one arrival a minute (60/h); the threshold is
// ln(1440/0.0005) = 14.873.
//
// Surge ×4 from 10:00, an arrival every 15 s from 10:00:15: each arrival
// adds ln 4 = 1.386 and each 15 s takes away 3 × 60/h × 15 s = 0.75, so
// after the first post-change arrival (S = 1.386: the 75 s since 09:59
// took S back to 0) S grows 0.636 an arrival and reaches the threshold at
// the 23rd, 10:05:45.
//
// Drop to a quarter from 10:00, an arrival every 4 min from 10:04: S rises
// 0.75 a minute and falls ln 4 at each arrival; 3.75 − 1.386 = 2.364 at
// 10:04, +1.614 every 4 min, 12.048 at 10:28, and the threshold 3.767 min
// later, at 10:31:46.
func TestCUSUMTimeToDetect(t *testing.T) {
	start := at("00:00")
	before := every(start, at("10:00"), time.Minute)
	for _, c := range []struct {
		name   string
		kind   string
		factor float64
		after  []time.Time
		want   time.Time
	}{
		{"surge", IncidentSurge, 4, every(at("10:00").Add(15*time.Second), at("13:00"), 15*time.Second), at("10:05").Add(45 * time.Second)},
		{"drop", IncidentDrop, 0.25, every(at("10:04"), at("13:00"), 4*time.Minute),
			at("10:28").Add(time.Duration((ln2880000 - (3.75 - math.Log(4)) - 6*(3-math.Log(4))) / 0.75 * float64(time.Minute)))},
	} {
		inc := &Incident{Spec: IncidentSpec{Kind: c.kind}, Start: at("10:00"), End: at("13:00"), Factor: c.factor}
		m := flatRate(60, append(append([]time.Time(nil), before...), c.after...))
		m.yardstick(time.UTC, start, inc)
		if inc.Yardstick != YardCUSUM || !nearTime(inc.YardAt, c.want, time.Second) {
			t.Errorf("%s: CUSUM %q at %s, want %s", c.name, inc.Yardstick, inc.YardAt.Format(time.TimeOnly), c.want.Format(time.TimeOnly))
		}
		// Normal traffic all along: no alarm.
		quiet := &Incident{Spec: IncidentSpec{Kind: c.kind}, Start: at("10:00"), End: at("13:00"), Factor: c.factor}
		m = flatRate(60, every(start, at("18:00"), time.Minute))
		if m.yardstick(time.UTC, start, quiet); !quiet.YardAt.IsZero() {
			t.Errorf("%s: CUSUM alarms on normal traffic at %s", c.name, quiet.YardAt)
		}
	}
}

// TestHourlyCUSUMTimeToDetect: with a huge dispersion shape and no daily
// level the CUSUM of an overdispersed source is a Poisson one whose
// changes start at hour boundaries, with a threshold per hour,
// ln(24/0.0005) = 10.78. On the ×4 surge of TestCUSUMTimeToDetect the hour
// from 10:00 adds 0.636 an arrival: the 17th, 10:04:15.
func TestHourlyCUSUMTimeToDetect(t *testing.T) {
	start := at("00:00")
	inc := &Incident{Spec: IncidentSpec{Kind: IncidentSurge}, Start: at("10:00"), End: at("13:00"), Factor: 4}
	m := flatRate(60, append(every(start, at("10:00"), time.Minute), every(at("10:00").Add(15*time.Second), at("13:00"), 15*time.Second)...))
	m.nbShape = 1e9
	m.yardstick(time.UTC, start, inc)
	if want := at("10:04").Add(15 * time.Second); !nearTime(inc.YardAt, want, time.Second) {
		t.Errorf("hourly CUSUM at %s, want %s", inc.YardAt.Format(time.TimeOnly), want.Format(time.TimeOnly))
	}
}

// TestMixtureCUSUMReadsTheDay: the CUSUM of a source whose days have a
// level of their own (Gamma, CV 18%) does not know the day's level, as no
// detector does. A day at 45% of normal from midnight is a day that low,
// however unlikely (2.7 times Poisson traffic's spread of levels, but
// nothing in it changed): no drop. The same afternoon after a normal
// morning is a drop, flagged within an hour and a half of its start.
func TestMixtureCUSUMReadsTheDay(t *testing.T) {
	day := func(h string) time.Time { return at(h).Add(24 * time.Hour) }
	start := at("00:00")
	normal := every(start, day("00:00"), time.Minute) // 60 an hour
	for _, c := range []struct {
		name  string
		from  time.Time // the day runs at 45% from here (a normal morning before)
		alarm bool
	}{
		{"a low day", day("00:00"), false},
		{"a drop after a normal morning", day("10:00"), true},
	} {
		arr := append(append([]time.Time(nil), normal...), every(day("00:00"), c.from, time.Minute)...)
		arr = append(arr, every(c.from, day("23:00"), time.Minute*60/27)...)
		m := flatRate(60, arr)
		m.nbShape, m.dayShape = 1e9, 30
		inc := &Incident{Spec: IncidentSpec{Kind: IncidentDrop}, Start: day("10:00"), End: day("22:00"), Factor: 0.3}
		m.yardstick(time.UTC, start, inc)
		switch {
		case c.alarm && (inc.YardAt.IsZero() || inc.YardAt.After(day("11:30"))):
			t.Errorf("%s: alarm at %v, want one by 11:30", c.name, inc.YardAt)
		case !c.alarm && !inc.YardAt.IsZero():
			t.Errorf("%s: alarm at %v, want none", c.name, inc.YardAt)
		}
	}
}

// TestMissedRunOracle: a missed run is flagged when a normal run would
// certainly have reported: its latest end, or for a job with start pings
// its latest start; not at all before the job ran minRunsBefore times.
func TestMissedRunOracle(t *testing.T) {
	m := &scheduleModel{cal: everyCal{every: time.Hour}, dur0: 10 * time.Second, spread: time.Minute}
	inc := &Incident{Spec: IncidentSpec{Kind: IncidentMissedRun, Runs: 1}, Start: at("10:00"), End: at("11:00")}
	m.judge(time.UTC, at("00:00"), inc)
	m.yardstick(time.UTC, at("00:00"), inc)
	if want := at("10:04").Add(10 * time.Second); inc.Yardstick != YardOracle || !inc.YardAt.Equal(want) {
		t.Errorf("missed run flagged at %s, want %s", inc.YardAt, want)
	}
	m.startEnd = true
	m.yardstick(time.UTC, at("00:00"), inc)
	if want := at("10:00").Add(5 * time.Second); !inc.YardAt.Equal(want) {
		t.Errorf("missed start ping flagged at %s, want %s", inc.YardAt, want)
	}
	early := &Incident{Spec: IncidentSpec{Kind: IncidentMissedRun, Runs: 1}, Start: at("02:00"), End: at("03:00")}
	m.judge(time.UTC, at("00:00"), early) // 2 runs before it
	if m.yardstick(time.UTC, at("00:00"), early); !early.YardAt.IsZero() {
		t.Errorf("a missed 3rd run flagged at %s", early.YardAt)
	}
}

// TestSummariseYard: the share is of what the yardstick found, the ratio
// over what both found.
func TestSummariseYard(t *testing.T) {
	outs := []IncidentOutcome{
		{Yardstick: YardOracle, YardFound: true, YardTTD: 10 * time.Minute, Detected: true, TTD: 20 * time.Minute},
		{Yardstick: YardOracle, YardFound: true, YardTTD: 10 * time.Minute, Detected: true, TTD: 10 * time.Minute},
		{Yardstick: YardOracle, YardFound: true, YardTTD: 10 * time.Minute, Detected: true, TTD: 40 * time.Minute},
		{Yardstick: YardOracle, YardFound: true, YardTTD: 10 * time.Minute},                                       // missed
		{Yardstick: YardOracle, Detected: true, TTD: time.Hour},                                                   // not the yardstick's
		{Yardstick: YardCUSUM, YardFound: true, YardTTD: time.Minute, Detected: true, TTD: time.Hour},             // another yardstick
		{Yardstick: YardOracle, YardFound: true, YardTTD: 5 * time.Second, Detected: true, TTD: 30 * time.Second}, // at least a minute
		{Yardstick: YardOracle, YardFound: true, YardTTD: time.Minute, Detected: true, TTD: time.Minute},          // ratio 1
		{Yardstick: YardOracle, YardFound: true, YardTTD: time.Minute, Detected: true, TTD: time.Minute},          // ratio 1
		{Yardstick: YardOracle, YardFound: true, YardTTD: time.Minute, Detected: true, TTD: 90 * time.Second},     // 1.5
	}
	s := SummariseYard(outs, YardOracle, func(IncidentOutcome) bool { return true })
	// Ratios: 2, 1, 4, 0.5, 1, 1, 1.5: sorted 0.5 1 1 1 1.5 2 4, median 1, p90 4.
	if s.N != 9 || s.YardFound != 8 || s.BothFound != 7 || s.MedianRatio != 1 || s.P90Ratio != 4 {
		t.Errorf("%+v", s)
	}
}

// TestTooOftenAndMonthEnd: the job that starts running 4 times an hour
// does so for the whole incident, and the month-end calendar runs on the
// last day of each month.
func TestTooOftenAndMonthEnd(t *testing.T) {
	f := family(t, "u-cron-hourly-extra")
	s, err := f.IncidentStream(3, spec(t, f, "4 runs an hour for 1d"), 0)
	if err != nil {
		t.Fatal(err)
	}
	in := s.Incidents[0]
	if n := count(s.Events, in.Start, in.End); n < 4*24-4 || n > 4*24+1 || !in.Detectable {
		t.Errorf("%d events in the day of 4 runs an hour (detectable %v)", n, in.Detectable)
	}
	if n := count(s.Events, in.Start.Add(-24*time.Hour), in.Start); n != 24 {
		t.Errorf("%d events in the day before, want 24", n)
	}
	c := lastDayCal{min: 23*60 + 30}
	riga, _ := time.LoadLocation("Europe/Riga")
	got := c.next(riga, time.Date(2026, 2, 1, 0, 0, 0, 0, riga))
	for _, want := range []string{"2026-02-28T23:30:00+02:00", "2026-03-31T23:30:00+03:00", "2026-04-30T23:30:00+03:00"} {
		if got.Format(time.RFC3339) != want {
			t.Errorf("month end %s, want %s", got.Format(time.RFC3339), want)
		}
		got = c.next(riga, got.Add(time.Second))
	}
}
