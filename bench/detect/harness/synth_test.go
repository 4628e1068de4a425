package harness

import (
	"reflect"
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

func TestStreamsAreDeterministic(t *testing.T) {
	for _, f := range Families() {
		sp := f.Incidents[0]
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
		if len(a.Events) == 0 || len(a.Info.History) == 0 {
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
	f := family(t, "poisson-50")
	for i := 0; i < 5; i++ {
		s, err := f.IncidentStream(1, spec(t, f, "outage 6h"), i)
		if err != nil {
			t.Fatal(err)
		}
		in := s.Incidents[0]
		if n := count(s.Events, in.Start, in.End); n != 0 {
			t.Errorf("outage holds %d events", n)
		}
		if in.Start.Before(s.Info.LearnEnd) || in.End.Sub(in.Start) != 6*time.Hour {
			t.Errorf("outage %v-%v, learning ends %v", in.Start, in.End, s.Info.LearnEnd)
		}
		if n := count(s.Events, in.Start.AddDate(0, 0, -7), in.End.AddDate(0, 0, -7)); n == 0 {
			t.Errorf("the same hours a week earlier are empty too")
		}
	}
	// Drops and surges: compare with the same hours one week earlier, summed
	// over streams so that the seasonal profile and noise average out.
	for _, c := range []struct {
		name     string
		min, max float64
	}{{"drop to 30% 12h", 0.2, 0.4}, {"surge x3-5 3h", 2.7, 5.3}} {
		var during, before float64
		for i := 0; i < 20; i++ {
			s, err := f.IncidentStream(1, spec(t, f, c.name), i)
			if err != nil {
				t.Fatal(err)
			}
			in := s.Incidents[0]
			during += float64(count(s.Events, in.Start, in.End)) / in.Factor
			before += float64(count(s.Events, in.Start.AddDate(0, 0, -7), in.End.AddDate(0, 0, -7)))
			if in.Factor < c.min || in.Factor > c.max {
				t.Errorf("%s: factor %v", c.name, in.Factor)
			}
		}
		// Divided by its factor, the incident's traffic should look normal.
		if r := during / before; r < 0.75 || r > 1.33 {
			t.Errorf("%s: traffic/factor vs a week before = %.2f, want ≈1", c.name, r)
		}
	}
}

func TestMissedRunsAreMissing(t *testing.T) {
	for _, name := range []string{"cron-daily", "cron-hourly", "cron-5min"} {
		f := family(t, name)
		s, err := f.IncidentStream(1, spec(t, f, "missed 3 runs"), 0)
		if err != nil {
			t.Fatal(err)
		}
		in := s.Incidents[0]
		// Jitter moves a run by at most 2 min; the slots in between are empty.
		if n := count(s.Events, in.Start.Add(2*time.Minute), in.End.Add(-2*time.Minute)); n != 0 {
			t.Errorf("%s: %d events during 3 missed runs", name, n)
		}
		period := in.End.Sub(in.Start) / 3
		if n := count(s.Events, in.End.Add(-2*time.Minute), in.End.Add(period-2*time.Minute)); n != 1 {
			t.Errorf("%s: %d runs right after the missed ones, want 1", name, n)
		}
	}
}

// TestExtraPingsComeWithEveryRun checks the episodes of schedule families:
// the stream is the same as without extras (every run still comes), plus
// exactly Runs × Extra events in the episode.
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
			in, end := s.Incidents[0], minTime(s.End, s0.End)
			if n := count(s0.Events, in.Start.Add(-2*time.Minute), end); n == 0 {
				t.Fatalf("%s, %s: no runs", name, sp.Name)
			}
			extra := count(s.Events, s.Info.Start, end) - count(s0.Events, s.Info.Start, end)
			inEpisode := count(s.Events, in.Start.Add(-2*time.Minute), in.End.Add(2*time.Minute)) -
				count(s0.Events, in.Start.Add(-2*time.Minute), in.End.Add(2*time.Minute))
			if extra != sp.Runs*sp.Extra || inEpisode != extra {
				t.Errorf("%s, %s: %d extra events, %d of them in the episode; want %d", name, sp.Name, extra, inEpisode, sp.Runs*sp.Extra)
			}
		}
	}
}

// TestCronDailyFollowsLocalTime checks the 02:00 Europe/Riga job stays at
// 02:00 local across the DST change, so its UTC gap is 23 h or 25 h once.
func TestCronDailyFollowsLocalTime(t *testing.T) {
	f := family(t, "cron-daily")
	seen := map[time.Duration]bool{}
	for i := 0; i < 4; i++ {
		s, err := f.CleanStream(1, i, 30)
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range s.Events {
			lt := e.T.In(s.Info.Location)
			if m := lt.Hour()*60 + lt.Minute(); m < 1*60+58 || m > 2*60+2 {
				t.Fatalf("run at %s local", lt)
			}
			if k > 0 {
				seen[s.Events[k].T.Sub(s.Events[k-1].T).Round(time.Hour)] = true
			}
		}
	}
	if !seen[23*time.Hour] || !seen[25*time.Hour] || !seen[24*time.Hour] {
		t.Errorf("gaps seen %v, want 23 h, 24 h and 25 h (both DST changes)", seen)
	}
}

// TestRateStreamsCrossDST checks every clean stream's scored part holds a
// change of its zone's UTC offset, and incident weeks do too.
func TestRateStreamsCrossDST(t *testing.T) {
	f := family(t, "poisson-5")
	for i := 0; i < 8; i++ {
		s, err := f.CleanStream(1, i, 60)
		if err != nil {
			t.Fatal(err)
		}
		_, o1 := s.Info.LearnEnd.Zone()
		_, o2 := s.End.Zone()
		if o1 == o2 {
			t.Errorf("%s (%s): no DST change in the scored part", s.Info.Name, s.Info.Location)
		}
		s, _ = f.IncidentStream(1, f.Incidents[0], i)
		_, o1 = s.Info.LearnEnd.Zone()
		_, o2 = s.Info.LearnEnd.AddDate(0, 0, incidentSpan).Zone()
		if o1 == o2 {
			t.Errorf("%s (%s): no DST change in the incident week", s.Info.Name, s.Info.Location)
		}
	}
}

// TestNegBinIsOverdispersed checks hourly counts of the negative-binomial
// family vary well beyond Poisson around a local hour-of-week mean.
func TestNegBinIsOverdispersed(t *testing.T) {
	ratio := func(name string) float64 {
		s, err := family(t, name).CleanStream(1, 0, 28)
		if err != nil {
			t.Fatal(err)
		}
		// Counts per (hour-of-week) over the 8 weeks; mean variance/mean.
		type key struct{ wd, h int }
		counts := map[key]map[int]float64{}
		for _, e := range s.Events {
			lt := e.T.In(s.Info.Location)
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
	if p, nb := ratio("poisson-50"), ratio("negbin-50"); p > 1.6 || nb < 4 {
		t.Errorf("variance/mean: poisson %.2f (want ≈1), negbin %.2f (want ≫1)", p, nb)
	}
}
