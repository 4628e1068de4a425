package detectjudge

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func family(t *testing.T, name string) *Family {
	t.Helper()
	fs, unknown := FilterFamilies(Families(), name)
	if len(fs) != 1 || len(unknown) > 0 {
		t.Fatalf("family %q not found", name)
	}
	return fs[0]
}

func spec(t *testing.T, f *Family, name string) IncidentSpec {
	t.Helper()
	for _, s := range f.Incidents {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s: no incident %q", f.Name, name)
	return IncidentSpec{}
}

func count(evs []Event, from, to time.Time) int {
	n := 0
	for _, e := range evs {
		if !e.T.Before(from) && e.T.Before(to) {
			n += e.Count
		}
	}
	return n
}

// heavy families take long to generate under -race; lighter ones run the
// same code.
var heavy = map[string]bool{"poisson-20": true, "poisson-200": true, "negbin-50": true, "workhours-20": true,
	"bursty-3": true, "trend-20": true, "berlin-on-utc-20": true, "cron-5min": true}

func TestStreamsAreDeterministic(t *testing.T) {
	for _, f := range Families() {
		if heavy[f.Name] {
			continue
		}
		sp := f.Incidents[len(f.Incidents)-1]
		a, err := f.IncidentStream(42, sp, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := f.IncidentStream(42, sp, 3)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: same seed, different streams", f.Name)
		}
		c, _ := f.IncidentStream(43, sp, 3)
		if reflect.DeepEqual(a.Events, c.Events) {
			t.Errorf("%s: different seeds, same events", f.Name)
		}
		if len(a.Events) == 0 || len(a.Info.History) == 0 && f.Days == 0 {
			t.Errorf("%s: empty stream", f.Name)
		}
		for i := 1; i < len(a.Events); i++ {
			if a.Events[i].T.Before(a.Events[i-1].T) {
				t.Fatalf("%s: events out of order", f.Name)
			}
		}
		if last := a.Events[len(a.Events)-1].T; !last.Before(a.End) || a.Events[0].T.Before(a.Info.Start) {
			t.Errorf("%s: events outside [Start, End)", f.Name)
		}
	}
}

func TestIncidentsAreInTheStream(t *testing.T) {
	f := family(t, "poisson-2")
	for i := 0; i < 3; i++ {
		s, err := f.IncidentStream(1, spec(t, f, "outage 4d"), i)
		if err != nil {
			t.Fatal(err)
		}
		in := s.Incidents[0]
		if n := count(s.Events, in.Start, in.End); n != 0 || in.Arrivals != 0 {
			t.Errorf("outage holds %d events (%d arrivals)", n, in.Arrivals)
		}
		if in.Start.Before(s.Info.LearnEnd) || in.End.Sub(in.Start) != 96*time.Hour || in.End.After(s.End.AddDate(0, 0, -1)) {
			t.Errorf("outage %v-%v, learning ends %v, stream %v", in.Start, in.End, s.Info.LearnEnd, s.End)
		}
		if n := count(s.Events, in.Start.AddDate(0, 0, -7), in.End.AddDate(0, 0, -7)); n == 0 {
			t.Errorf("the same hours a week earlier are empty too")
		}
		if !in.Detectable || in.PValue > OracleAlpha {
			t.Errorf("a 4-day outage at 2/h not detectable: p = %g", in.PValue)
		}
	}
	// Drops and surges: the arrivals, divided by the factor, match what the
	// oracle expects of normal traffic in those hours (summed over streams).
	f = family(t, "poisson-20")
	for _, c := range []struct {
		name     string
		min, max float64
	}{{"drop to 30% 12h", 0.2, 0.4}, {"surge x3-5 3h", 2.7, 5.3}} {
		var during, expected float64
		for i := 0; i < 3; i++ {
			s, err := f.IncidentStream(1, spec(t, f, c.name), i)
			if err != nil {
				t.Fatal(err)
			}
			in := s.Incidents[0]
			if n := count(s.Events, in.Start, in.End); n != in.Arrivals {
				t.Errorf("%s: %d events, %d arrivals", c.name, n, in.Arrivals)
			}
			mean, _ := s.model.(*rateModel).moments(s.Traffic, s.Info.Start, in.Start, in.End)
			during += float64(in.Arrivals) / in.Factor
			expected += mean
			if in.Factor < c.min || in.Factor > c.max {
				t.Errorf("%s: factor %v", c.name, in.Factor)
			}
		}
		if r := during / expected; r < 0.8 || r > 1.25 {
			t.Errorf("%s: arrivals/factor vs the normal mean = %.2f, want ≈1", c.name, r)
		}
	}
}

// TestScheduleIncidents checks what each schedule incident does to the
// pings: a missed run has none, a late run reports once at its end, a stuck
// run pings its start only and blocks the runs after it.
func TestScheduleIncidents(t *testing.T) {
	for _, name := range []string{"cron-hourly", "cron-daily", "cron-weekdays", "cron-twice-daily", "cron-workhours", "startend-hourly", "startend-daily", "berlin-on-utc-daily", "schedule-change"} {
		f := family(t, name)
		for _, sp := range f.Incidents {
			for i := 0; i < 2; i++ {
				s, err := f.IncidentStream(1, sp, i)
				if err != nil {
					t.Fatal(err)
				}
				in := s.Incidents[0]
				n := count(s.Events, in.Start, in.End)
				want := map[string]int{IncidentMissedRun: 0, IncidentLateRun: 0, IncidentStuck: 1}[sp.Kind]
				if sp.Kind == IncidentLateRun && strings.HasPrefix(name, "startend") {
					want = 1 // the start ping is on time
				}
				if n != want || sp.Kind == IncidentMissedRun && in.Arrivals != 0 {
					t.Errorf("%s, %s: %d events (%d arrivals) in [%s, %s), want %d", name, sp.Name, n, in.Arrivals,
						in.Start.In(s.Traffic), in.End.In(s.Traffic), want)
				}
				if sp.Kind == IncidentLateRun && count(s.Events, in.End, in.End.Add(time.Millisecond)) != 1 {
					t.Errorf("%s: the late run does not report at %s", name, in.End)
				}
				if sp.firstWeek() {
					from, to := s.Info.Start.Add(days(sp.Day)), s.Info.Start.Add(days(sp.DayMax))
					// The first slot at or after a uniform instant in [from, to): a weekend later at most.
					if in.Start.Before(from) || in.Start.After(to.Add(72*time.Hour)) {
						t.Errorf("%s, %s: starts %s, want in [%s, %s] or its next slot", name, sp.Name, in.Start, from, to)
					}
					continue
				}
				if !in.Detectable || in.Start.Before(s.Info.LearnEnd) {
					t.Errorf("%s, %s: detectable %v, start %s, learning ends %s", name, sp.Name, in.Detectable, in.Start, s.Info.LearnEnd)
				}
			}
		}
	}
}

// TestExtraPingsComeWithEveryRun checks the episodes of schedule families:
// the stream is the same as without extras (every run still comes), plus
// exactly Runs × Extra events in the episode, which is excused.
func TestExtraPingsComeWithEveryRun(t *testing.T) {
	for _, name := range []string{"cron-daily", "cron-hourly", "cron-5min"} {
		f := family(t, name)
		if len(f.Episodes) != 3 {
			t.Fatalf("%s: %d episodes", name, len(f.Episodes))
		}
		for _, sp := range f.Episodes {
			s, err := f.IncidentStream(1, sp, 0)
			if err != nil {
				t.Fatal(err)
			}
			none := sp
			none.Extra = 0 // the same name, so the same draws: the same runs
			s0, err := f.IncidentStream(1, none, 0)
			if err != nil {
				t.Fatal(err)
			}
			in := s.Incidents[0]
			if n := count(s0.Events, in.Start, in.End.Add(time.Hour)); n == 0 {
				t.Fatalf("%s, %s: no runs", name, sp.Name)
			}
			extra := count(s.Events, s.Info.Start, s.End) - count(s0.Events, s.Info.Start, s.End)
			inEpisode := count(s.Events, in.Start, s.Excused[0].To) - count(s0.Events, in.Start, s.Excused[0].To)
			if extra != sp.Runs*sp.Extra || inEpisode != extra {
				t.Errorf("%s, %s: %d extra events, %d of them in the episode; want %d", name, sp.Name, extra, inEpisode, sp.Runs*sp.Extra)
			}
		}
	}
}

// medianMinute is the median minute of the day of ts in loc.
func medianMinute(ts []time.Time, loc *time.Location) int {
	ms := make([]int, len(ts))
	for i, t := range ts {
		lt := t.In(loc)
		ms[i] = lt.Hour()*60 + lt.Minute()
	}
	sort.Ints(ms)
	return ms[len(ms)/2]
}

// TestWrongZoneFollowsBerlin checks the daily job of a beet left at UTC runs
// at the same Berlin time across the DST change, so an hour apart in UTC.
func TestWrongZoneFollowsBerlin(t *testing.T) {
	f := family(t, "berlin-on-utc-daily")
	for i := 0; i < 4; i++ {
		s, err := f.CleanStream(1, i)
		if err != nil {
			t.Fatal(err)
		}
		if s.Info.Location != time.UTC || s.Traffic.String() != "Europe/Berlin" {
			t.Fatalf("beet zone %s, traffic %s", s.Info.Location, s.Traffic)
		}
		_, change := s.Events[0].T.In(s.Traffic).ZoneBounds()
		var before, after []time.Time
		for _, e := range s.Events {
			if e.T.Before(change) {
				before = append(before, e.T)
			} else {
				after = append(after, e.T)
			}
		}
		if len(before) < 7 || len(after) < 7 {
			t.Fatalf("%d runs before the change at %s, %d after", len(before), change, len(after))
		}
		local := medianMinute(after, s.Traffic) - medianMinute(before, s.Traffic)
		utc := medianMinute(after, time.UTC) - medianMinute(before, time.UTC)
		if local < -15 || local > 15 || (utc < 45 || utc > 75) && (utc > -45 || utc < -75) {
			t.Errorf("%s: the median run moved %d min in Berlin time and %d min in UTC; want ~0 and ~±60", s.Info.Name, local, utc)
		}
	}
}

// TestEveryStreamCrossesDST checks every stream of every family holds a
// change of its traffic's UTC offset after its clean days, or of its
// beet's where the traffic keeps a server's UTC clock.
func TestEveryStreamCrossesDST(t *testing.T) {
	for _, f := range Families() {
		if heavy[f.Name] {
			continue
		}
		for i := 0; i < 2; i++ {
			s, err := f.CleanStream(1, i)
			if err != nil {
				t.Fatal(err)
			}
			z := s.Traffic
			if len(dstChanges(z, dstYear)) == 0 {
				z = s.Info.Location
			}
			_, o1 := s.Info.LearnEnd.In(z).Zone()
			_, o2 := s.End.In(z).Zone()
			if o1 == o2 {
				t.Errorf("%s (%s): no DST change after the clean days", s.Info.Name, z)
			}
			if d := s.End.Sub(s.Info.Start).Hours() / 24; d < 55.9 {
				t.Errorf("%s: %.1f days, want eight weeks at least", s.Info.Name, d)
			}
		}
	}
}

// TestShapes checks the traffic shapes that are the point of their
// families: working hours, weekdays only, bursts of 1-20 events.
func TestShapes(t *testing.T) {
	s, err := family(t, "workhours-20").CleanStream(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Events {
		if lt := e.T.In(s.Traffic); isWeekend(lt.Weekday()) || lt.Hour() < 7 || lt.Hour() >= 20 {
			t.Fatalf("workhours-20: an event at %s", lt.Format("Mon 15:04"))
		}
	}
	if s, _ = family(t, "weekdays-5").CleanStream(1, 0); len(s.Events) < 4000 {
		t.Errorf("weekdays-5: %d events in 8 weeks", len(s.Events))
	}
	for _, e := range s.Events {
		if lt := e.T.In(s.Traffic); isWeekend(lt.Weekday()) {
			t.Fatalf("weekdays-5: an event on %s", lt.Format("Mon 15:04"))
		}
	}
	// Bursts: split where events are over 10 min apart; sizes span 1-20.
	s, _ = family(t, "bursty-0.3").CleanStream(1, 0)
	sizes := map[int]bool{}
	n := 1
	for i := 1; i <= len(s.Events); i++ {
		if i == len(s.Events) || s.Events[i].T.Sub(s.Events[i-1].T) > 10*time.Minute {
			sizes[n] = true
			n = 0
		}
		n++
	}
	if !sizes[1] || !sizes[20] || len(sizes) < 15 {
		t.Errorf("burst sizes seen: %v", sizes)
	}
}

// TestOracleTails checks the tail probabilities the oracle judges with.
func TestOracleTails(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9+1e-6*want }
	if p := lowerTail(0, 11.5, 11.5); !near(p, math.Exp(-11.5)) {
		t.Errorf("P(N=0 | Poisson 11.5) = %g", p)
	}
	if p := upperTail(3, 0.6, 0.6); !near(p, 1-math.Exp(-0.6)*(1+0.6+0.18)) {
		t.Errorf("P(N≥3 | Poisson 0.6) = %g", p)
	}
	// Negative binomial, size 2 (variance μ + μ²/2): P(0) = (2/(2+μ))².
	if p := lowerTail(0, 4, 4+8); !near(p, 1.0/9) {
		t.Errorf("P(N=0 | NB μ 4, size 2) = %g, want 1/9", p)
	}
	if p := lowerTail(10, 10, 10) + upperTail(11, 10, 10); !near(p, 1) {
		t.Errorf("tails add to %g", p)
	}
	// An outage of 4 days at 2/h is detectable, one of an hour at 0.2/h not.
	for name, c := range map[string]struct {
		incident string
		want     bool
	}{"poisson-2": {"outage 4d", true}, "poisson-0.2": {"outage 1h", false}} {
		f := family(t, name)
		s, err := f.IncidentStream(1, spec(t, f, c.incident), 0)
		if err != nil {
			t.Fatal(err)
		}
		if in := s.Incidents[0]; in.Detectable != c.want {
			t.Errorf("%s, %s: detectable %v (p %g)", name, c.incident, in.Detectable, in.PValue)
		}
	}
}

// TestNegBinIsOverdispersed checks hourly counts of the negative-binomial
// family vary well beyond Poisson around a local hour-of-week mean.
func TestNegBinIsOverdispersed(t *testing.T) {
	ratio := func(name string) float64 {
		s, err := family(t, name).CleanStream(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Counts per (hour-of-week) over the 8 weeks; mean variance/mean.
		type key struct{ wd, h int }
		counts := map[key]map[int]float64{}
		for _, e := range s.Events {
			lt := e.T.In(s.Traffic)
			k := key{int(lt.Weekday()), lt.Hour()}
			if counts[k] == nil {
				counts[k] = map[int]float64{}
			}
			counts[k][int(e.T.Sub(s.Info.Start)/(7*24*time.Hour))]++
		}
		var sum float64
		for _, byWeek := range counts {
			var m, v float64
			for w := 0; w < 8; w++ {
				m += byWeek[w] / 8
			}
			for w := 0; w < 8; w++ {
				v += (byWeek[w] - m) * (byWeek[w] - m) / 7
			}
			sum += v / m
		}
		return sum / float64(len(counts))
	}
	if p, nb := ratio("poisson-2"), ratio("negbin-50"); p > 1.6 || nb < 4 {
		t.Errorf("variance/mean: poisson %.2f (want ≈1), negbin %.2f (want ≫1)", p, nb)
	}
}

// TestLoopCalDrifts: a loop's pings are a sleep and a run apart (so they
// drift off the hour), each gap within what the oracle takes as the
// longest normal one; and a stream's loop, anchored at its start, is the
// same whichever slot is asked for next.
func TestLoopCalDrifts(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	loop := func() *loopCal { return newLoop(rand.New(rand.NewPCG(1, 2)), time.Hour, 30*time.Second, 2*time.Minute) }
	a, b := loop(), loop()
	b.next(time.UTC, start)                    // the stream's start, as settled and generate ask first
	b.next(time.UTC, start.Add(200*time.Hour)) // then far ahead (place)
	var prev time.Time
	for s := a.next(time.UTC, start); s.Before(start.Add(200 * time.Hour)); s = a.next(time.UTC, s.Add(time.Second)) {
		if got := b.next(time.UTC, s); !got.Equal(s) {
			t.Fatalf("slot %s asked second is %s", s, got)
		}
		if !prev.IsZero() {
			if gap := s.Sub(prev); gap < time.Hour+30*time.Second || gap > a.longest() {
				t.Fatalf("gap %s after %s: want a sleep and a run, at most %s", gap, prev, a.longest())
			}
		}
		prev = s
	}
}

// A flaky job's earlier outages carry no pings, are excused, and come
// before its incident.
func TestFlakyJobOutagesComeFirst(t *testing.T) {
	f := family(t, "u-cron-hourly-flaky")
	for i := range 6 {
		s, err := f.IncidentStream(1, spec(t, f, "stopped 4d"), i)
		if err != nil {
			t.Fatal(err)
		}
		var outages []Window
		for _, w := range s.Excused {
			if w.Name == "an earlier outage" {
				outages = append(outages, w)
			}
		}
		if len(outages) != 2 {
			t.Fatalf("stream %d: %d earlier outages excused, want 2", i, len(outages))
		}
		for _, w := range outages {
			if n := count(s.Events, w.From, w.To.Add(-DetectTolerance)); n != 0 {
				t.Errorf("stream %d: %d events in the outage %s-%s", i, n, w.From, w.To)
			}
			if w.To.Sub(w.From)-DetectTolerance < 20*time.Minute {
				t.Errorf("stream %d: outage %s-%s under 20 min", i, w.From, w.To)
			}
			if !s.Incidents[0].Start.After(w.To) {
				t.Errorf("stream %d: incident at %s before the outage ending %s", i, s.Incidents[0].Start, w.To)
			}
		}
		if n := count(s.Events, outages[0].To, s.Incidents[0].Start); n < 24 {
			t.Errorf("stream %d: %d events between the outages and the incident", i, n)
		}
	}
}

// A growing backup's runs end later, local time, week after week.
func TestGrowingJobRunsLonger(t *testing.T) {
	f := family(t, "u-backup-growing")
	for i := range 4 {
		s, err := f.CleanStream(1, i)
		if err != nil {
			t.Fatal(err)
		}
		meanEnd := func(from, to time.Time) time.Duration {
			var sum time.Duration
			n := 0
			for _, e := range s.Events {
				if !e.T.Before(from) && e.T.Before(to) {
					l := e.T.In(s.Traffic)
					sum += time.Duration(l.Hour())*time.Hour + time.Duration(l.Minute())*time.Minute
					n++
				}
			}
			if n < 5 {
				t.Fatalf("stream %d: %d runs in %s-%s", i, n, from, to)
			}
			return sum / time.Duration(n)
		}
		first := meanEnd(s.Info.Start, s.Info.Start.AddDate(0, 0, 7))
		last := meanEnd(s.End.AddDate(0, 0, -7), s.End)
		if grew := last - first; grew < 10*time.Minute {
			t.Errorf("stream %d: runs end %s later in the last week than in the first; want at least 10 min (0.5-1.5 min a day for 7 weeks)", i, grew)
		}
	}
}
