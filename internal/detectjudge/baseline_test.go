package detectjudge

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

var _ Detector = (*PeriodGrace)(nil)
var _ Detector = Never{}

func TestCarefulPeriod(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	hist := func(gaps ...time.Duration) []Event {
		evs := []Event{{T: t0, Count: 1}}
		for _, g := range gaps {
			evs = append(evs, Event{T: evs[len(evs)-1].T.Add(g), Count: 1})
		}
		return evs
	}
	for _, c := range []struct {
		gaps []time.Duration
		want time.Duration
	}{
		{[]time.Duration{5 * time.Minute, 5*time.Minute + 10*time.Second}, 6 * time.Minute},
		{[]time.Duration{time.Hour + 40*time.Second, time.Hour}, time.Hour + 15*time.Minute},
		{[]time.Duration{24*time.Hour + 3*time.Minute}, 25 * time.Hour},
		{[]time.Duration{37 * time.Minute}, 40 * time.Minute},
		{[]time.Duration{30 * time.Minute}, 30 * time.Minute},
	} {
		if got := CarefulPeriod(hist(c.gaps...), 0); got != c.want {
			t.Errorf("gaps %v: period %v, want %v", c.gaps, got, c.want)
		}
	}
	if got := CarefulPeriod(hist(), 28*24*time.Hour); got != 28*24*time.Hour {
		t.Errorf("no gaps: %v, want the history span", got)
	}
}

func TestPeriodGraceAlarmsOnceAndRecovers(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	p := &PeriodGrace{Period: time.Hour, Grace: 6 * time.Minute}
	p.Event(t0, 1)
	if a := p.Advance(t0.Add(66 * time.Minute)); len(a) != 0 {
		t.Errorf("alarm exactly at the deadline: %v", a)
	}
	a := p.Advance(t0.Add(3 * time.Hour))
	if len(a) != 1 || !a[0].At.Equal(t0.Add(66*time.Minute)) || a[0].Recovery || a[0].Kind != KindSilence {
		t.Fatalf("alarms %v, want one silence at +66m", a)
	}
	if a := p.Advance(t0.Add(5 * time.Hour)); len(a) != 0 {
		t.Errorf("alarm repeated: %v", a)
	}
	if a := p.Event(t0.Add(5*time.Hour), 1); len(a) != 1 || !a[0].Recovery {
		t.Errorf("no recovery on the next event: %v", a)
	}
}

func TestPeriodGraceDetectsOutages(t *testing.T) {
	fams, _ := FilterFamilies(Families(), "poisson-2")
	f := fams[0]
	tested := 0
	for _, spec := range f.Incidents {
		if spec.Kind != IncidentOutage {
			continue
		}
		for i := 0; i < 4; i++ {
			s, err := f.IncidentStream(1, spec, i)
			if err != nil {
				t.Fatal(err)
			}
			d := NewPeriodGrace(s.Info).(*PeriodGrace)
			if spec.Duration <= d.Period+d.Grace {
				continue // not required to be caught
			}
			alarms, err := Replay(d, s.Events, s.End)
			if err != nil {
				t.Fatal(err)
			}
			tested++
			o := ScoreIncident(f.Name, s.Incidents[0], alarms)
			// The alarm comes period + grace after the last event before the
			// outage, so within period + grace of its start.
			if !o.Detected || o.TTD > d.Period+d.Grace {
				t.Errorf("%s (%s): detected %v after %v", s.Info.Name, d.Describe(), o.Detected, o.TTD)
			}
		}
	}
	if tested < 4 {
		t.Errorf("only %d outages longer than period + grace", tested)
	}
}

func TestPeriodGraceQuietOnCleanCron(t *testing.T) {
	fams, _ := FilterFamilies(Families(), "cron-daily,cron-hourly,startend-daily,cron-weekdays")
	for _, f := range fams {
		for i := 0; i < 3; i++ {
			s, err := f.CleanStream(7, i)
			if err != nil {
				t.Fatal(err)
			}
			alarms, err := Replay(NewPeriodGrace(s.Info), s.Events, s.End)
			if err != nil {
				t.Fatal(err)
			}
			if o := ScoreStream(s, alarms, s.Info.LearnEnd, 7, 30); len(o.False) != 0 {
				t.Errorf("%s: %d false alarms on a clean cron stream", s.Info.Name, len(o.False))
			}
		}
	}
}

func TestNeverScoresZeroOnNAB(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "nab")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("NAB data not found at %s", dir)
	}
	series, err := LoadNAB(dir)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := LoadProfiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := EvaluateNAB(series, NewNever, profiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		var total NABScore
		for _, r := range res {
			total = total.Add(r.Scores[p.Name])
		}
		if total.Normalised() != 0 || total.Hits != 0 || total.FPs != 0 {
			t.Errorf("%s: never scores %v", p.Name, total.Normalised())
		}
	}
}
