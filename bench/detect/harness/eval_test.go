package harness

import (
	"reflect"
	"testing"
	"time"
)

func TestScoreIncident(t *testing.T) {
	inc := Incident{Spec: IncidentSpec{Name: "outage 1h"}, Start: at("10:00"), End: at("11:00")}
	cases := []struct {
		name   string
		alarms []Alarm
		want   time.Duration // -1: not detected
	}{
		{"none", nil, -1},
		{"before start", []Alarm{{At: at("09:59"), Kind: KindSilence}}, -1},
		{"recovery only", []Alarm{{At: at("10:30"), Kind: KindSilence, Recovery: true}}, -1},
		{"inside", []Alarm{{At: at("09:00")}, {At: at("10:20"), Kind: KindDrop}, {At: at("10:40")}}, 20 * time.Minute},
		{"at start", []Alarm{{At: at("10:00")}}, 0},
		{"within tolerance", []Alarm{{At: at("12:00")}}, 2 * time.Hour},
		{"past tolerance", []Alarm{{At: at("12:01")}}, -1},
	}
	for _, c := range cases {
		o := ScoreIncident("f", inc, c.alarms)
		if got := map[bool]time.Duration{true: o.TTD, false: -1}[o.Detected]; got != c.want {
			t.Errorf("%s: TTD %v detected %v, want %v", c.name, o.TTD, o.Detected, c.want)
		}
	}
}

func TestScoreClean(t *testing.T) {
	s := Stream{Info: StreamInfo{Family: "f", Start: at("00:00"), LearnEnd: at("06:00")}, End: at("18:00")}
	o := ScoreClean(s, []Alarm{{At: at("05:00")}, {At: at("07:00")}, {At: at("08:00"), Recovery: true}, {At: at("09:00")}})
	if o.Alarms != 2 || o.Days != 0.5 {
		t.Errorf("%+v, want 2 alarms over 0.5 days", o)
	}
	fa := SummariseClean([]CleanOutcome{o, {Family: "f", Days: 1.5}, {Family: "g", Days: 9, Alarms: 9}}, "f")
	if fa.Per1000() != 1000 || fa.Noisy != 1 || fa.Beets != 2 {
		t.Errorf("%+v: per 1000 %v", fa, fa.Per1000())
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if Percentile(ds, 50) != 5 || Percentile(ds, 95) != 10 || Percentile(ds, 10) != 1 || Percentile(nil, 50) != 0 {
		t.Errorf("p50 %v p95 %v p10 %v", Percentile(ds, 50), Percentile(ds, 95), Percentile(ds, 10))
	}
}

// gapDetector alarms when no event came for a fixed gap: enough to check
// that Evaluate wires streams, detectors and scores together.
type gapDetector struct {
	gap        time.Duration
	last       time.Time
	down       bool
	seenEvents int
}

func (g *gapDetector) Event(t time.Time, n int) []Alarm {
	g.last, g.down = t, false
	g.seenEvents += n
	return nil
}

func (g *gapDetector) Advance(t time.Time) []Alarm {
	if g.last.IsZero() || g.down || !t.After(g.last.Add(g.gap)) {
		return nil
	}
	g.down = true
	return []Alarm{{At: g.last.Add(g.gap), Kind: KindSilence}}
}

func TestEvaluateIsDeterministicAndScores(t *testing.T) {
	fams, _ := FilterFamilies(Families(), "cron-hourly,poisson-50")
	cfg := Config{Seed: 5, Families: fams, IncidentStreams: 3, CleanBeets: 2, CleanDays: 7, Workers: 1}
	factory := func(StreamInfo) Detector { return &gapDetector{gap: 90 * time.Minute} }
	a, err := Evaluate(cfg, factory)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = 3
	b, err := Evaluate(cfg, factory)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("results depend on the number of workers")
	}
	if len(a.Incidents) != 3*(2+5) || len(a.Clean) != 2*2 {
		t.Fatalf("%d incident and %d clean outcomes", len(a.Incidents), len(a.Clean))
	}
	// A 90-minute gap check catches every missed hourly run (3 missed runs
	// certainly) and every 6 h or 24 h outage at 50/h, and is quiet on clean
	// hourly jobs.
	for _, o := range a.Incidents {
		must := o.Incident == "missed 3 runs" || o.Incident == "outage 6h" || o.Incident == "outage 24h"
		if must && !o.Detected {
			t.Errorf("%s %s not detected", o.Family, o.Incident)
		}
	}
	if fa := SummariseClean(a.Clean, "cron-hourly"); fa.Alarms != 0 || fa.Days != 14 {
		t.Errorf("cron-hourly clean: %+v", fa)
	}
	// Every run comes in an episode, so the gap check is quiet there too.
	if len(a.Episodes) != 3*3 {
		t.Fatalf("%d episode outcomes", len(a.Episodes))
	}
	for _, o := range a.Episodes {
		if o.Family != "cron-hourly" || o.Alarms != 0 || o.Down != 0 {
			t.Errorf("episode %+v", o)
		}
	}
}
