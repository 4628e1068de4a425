package detectjudge

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
	// The yardstick's alarm counts in the same window as the detector's.
	for yardAt, want := range map[string]bool{"09:59": false, "10:00": true, "12:00": true, "12:01": false} {
		in := inc
		in.Yardstick, in.YardAt = YardOracle, at(yardAt)
		if o := ScoreIncident("f", in, nil); o.YardFound != want || o.Yardstick != YardOracle || want && o.YardTTD != at(yardAt).Sub(inc.Start) {
			t.Errorf("yardstick at %s: %+v", yardAt, o)
		}
	}
	for _, c := range cases {
		o := ScoreIncident("f", inc, c.alarms)
		if got := map[bool]time.Duration{true: o.TTD, false: -1}[o.Detected]; got != c.want {
			t.Errorf("%s: TTD %v detected %v, want %v", c.name, o.TTD, o.Detected, c.want)
		}
	}
}

// TestScoreIncidentCountsAlarmsFromCalm: a drop escalated to a silence is
// one alarm; a recovery and a new alarm in the same incident is a flap.
func TestScoreIncidentCountsAlarmsFromCalm(t *testing.T) {
	inc := Incident{Spec: IncidentSpec{Name: "drop"}, Start: at("10:00"), End: at("11:00")}
	for _, c := range []struct {
		name   string
		alarms []Alarm
		want   int
	}{
		{"escalated", []Alarm{{At: at("10:10"), Kind: KindDrop}, {At: at("10:30"), Kind: KindSilence}, {At: at("11:10"), Recovery: true}}, 1},
		{"flapping", []Alarm{{At: at("10:10"), Kind: KindSilence}, {At: at("10:20"), Recovery: true}, {At: at("10:40"), Kind: KindDrop}}, 2},
		{"open before", []Alarm{{At: at("09:50"), Kind: KindDrop}, {At: at("10:30"), Kind: KindSilence}}, 0},
	} {
		if o := ScoreIncident("f", inc, c.alarms); o.Alarms != c.want {
			t.Errorf("%s: %d alarms from calm, want %d", c.name, o.Alarms, c.want)
		}
	}
}

func TestScoreStream(t *testing.T) {
	evs := []Event{{T: at("01:00"), Count: 1}, {T: at("02:00"), Count: 1}, {T: at("03:00"), Count: 1}}
	s := Stream{Info: StreamInfo{Family: "f", Start: at("00:00"), LearnEnd: at("06:00")}, End: at("13:00"), Events: evs,
		Incidents: []Incident{{Spec: IncidentSpec{Kind: IncidentOutage}, Start: at("07:00"), End: at("08:00")}},
		Excused:   []Window{{Name: "x", From: at("10:00"), To: at("11:00")}}}
	alarms := []Alarm{
		{At: at("01:30")},                 // learning: still a false alarm
		{At: at("07:30")},                 // the incident
		{At: at("08:45")},                 // within the incident's tolerance
		{At: at("09:00"), Recovery: true}, // not an alarm
		{At: at("10:30")},                 // excused
		{At: at("12:00")},                 // false
	}
	o := ScoreStream(s, alarms, at("02:00"), 0, 2)
	// Judged: 01:00-13:00 less 07:00-09:00 and 10:00-11:00 = 9 h.
	if len(o.False) != 2 || o.Days != 9.0/24 {
		t.Errorf("%+v, want 2 false alarms over 9 h", o)
	}
	if o.ArmedAfter != time.Hour || o.ArmedLate {
		t.Errorf("armed after %v (late %v), want 1h, in the bound (the 2nd event)", o.ArmedAfter, o.ArmedLate)
	}
	// Learning: 01:00-02:00, with the false alarm at 01:30.
	if o.LearningFalse != 1 || o.LearningDays != 1.0/24 {
		t.Errorf("learning: %d false alarms over %v days, want 1 over 1 h", o.LearningFalse, o.LearningDays)
	}
	// Never armed: every judged day is a learning day, every false alarm a learning one.
	if o := ScoreStream(s, alarms, time.Time{}, 0, 2); o.LearningFalse != 2 || o.LearningDays != o.Days {
		t.Errorf("never armed: %d learning false alarms over %v of %v days", o.LearningFalse, o.LearningDays, o.Days)
	}
	// Armed at 09:30, inside the incident's window: learning 01:00-07:00
	// and 09:00-09:30, with the alarm at 01:30 in it.
	if o := ScoreStream(s, alarms, at("09:30"), 0, 2); o.LearningFalse != 1 || o.LearningDays != 6.5/24 {
		t.Errorf("armed at 09:30: %d learning false alarms over %v days", o.LearningFalse, o.LearningDays)
	}
	ls := SummariseStreams([]StreamOutcome{o, {LearningDays: 1 - 1.0/24, LearningFalse: 0}}, func(StreamOutcome) bool { return true })
	if ls.LearningPer1000() != 1000 {
		t.Errorf("learning: %v per 1000 learning beet-days, want 1000", ls.LearningPer1000())
	}
	if o := ScoreStream(s, nil, at("02:01"), 0, 2); !o.ArmedLate {
		t.Errorf("armed after the 2nd event, but not late")
	}
	if o := ScoreStream(s, nil, time.Time{}, 0, 2); !o.ArmedLate || o.ArmedAfter != -1 {
		t.Errorf("never armed: %+v", o)
	}
	if o := ScoreStream(s, nil, time.Time{}, 0, 4); o.ArmedLate {
		t.Errorf("never armed, but the bound (4 events) was never reached: not late")
	}
	sum := SummariseStreams([]StreamOutcome{o, {Family: "f", Days: 1.5 - 9.0/24, ArmedAfter: -1}, {Family: "g", Days: 9, False: make([]Alarm, 9)}},
		func(o StreamOutcome) bool { return o.Family == "f" })
	if sum.Per1000() != 2000/1.5 || sum.Noisy != 1 || sum.Streams != 2 || sum.Never != 1 || sum.ArmMedian != time.Hour {
		t.Errorf("%+v: per 1000 %v", sum, sum.Per1000())
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
	fams, _ := FilterFamilies(Families(), "cron-hourly,poisson-2")
	cfg := Config{Seed: 5, Families: fams, IncidentStreams: 2, CleanStreams: 1, Workers: 1, ArmDays: 7, ArmEvents: 30}
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
	// cron-hourly: 3 incidents, 2 first-week stops and 3 episodes; poisson-2: 5 incidents.
	if len(a.Incidents) != 2*(3+2+5) || len(a.Streams) != (1+2*5+2*3)+(1+2*5) {
		t.Fatalf("%d incident and %d stream outcomes", len(a.Incidents), len(a.Streams))
	}
	// A 90-minute gap check catches every stop of an hourly job and every
	// 4 d outage, and is quiet on hourly jobs.
	for _, o := range a.Incidents {
		must := o.Incident == "stopped 4d" || o.Incident == "outage 4d"
		if must && (!o.Detected || !o.Detectable) {
			t.Errorf("%s %s: detectable %v, detected %v", o.Family, o.Incident, o.Detectable, o.Detected)
		}
	}
	if s := SummariseStreams(a.Streams, func(o StreamOutcome) bool { return o.Family == "cron-hourly" }); s.FalseAlarms != 0 || s.Days < 6*55 {
		t.Errorf("cron-hourly: %+v", s)
	}
	// Every run comes in an episode, so the gap check is quiet there too.
	if len(a.Episodes) != 2*3 {
		t.Fatalf("%d episode outcomes", len(a.Episodes))
	}
	for _, o := range a.Episodes {
		if o.Family != "cron-hourly" || o.Alarms != 0 || o.Down != 0 {
			t.Errorf("episode %+v", o)
		}
	}
}

// TestJudgeCannotBeGamed checks the two trivial detectors score as they
// must: never alarming finds nothing, and alarming at every event finds
// what it finds at the price of thousands of false alarms per 1000
// beet-days, so neither looks good.
func TestJudgeCannotBeGamed(t *testing.T) {
	fams, _ := FilterFamilies(Families(), "poisson-2,cron-daily")
	cfg := Config{Seed: 9, Families: fams, IncidentStreams: 1, CleanStreams: 1, ArmDays: 7, ArmEvents: 30}
	never, err := Evaluate(cfg, NewNever)
	if err != nil {
		t.Fatal(err)
	}
	all := func(StreamOutcome) bool { return true }
	inc := func(IncidentOutcome) bool { return true }
	if s := SummariseIncidents(never.Incidents, inc); s.Detected != 0 || s.N != 5+3+2 || s.Detectable == 0 {
		t.Errorf("never: %+v", s)
	}
	if s := SummariseStreams(never.Streams, all); s.FalseAlarms != 0 || s.Never != 0 {
		t.Errorf("never: %+v (a detector without ArmedAt is armed from the first event)", s)
	}
	always, err := Evaluate(cfg, NewAlways)
	if err != nil {
		t.Fatal(err)
	}
	if s := SummariseStreams(always.Streams, all); s.Per1000() < 1000 {
		t.Errorf("always: %.1f false alarms per 1000 beet-days", s.Per1000())
	}
	if s := SummariseIncidents(always.Incidents, inc); s.Detected == 0 {
		t.Errorf("always found nothing: %+v", s)
	}
}

func TestFmtTTD(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                 "45s",
		3*time.Minute + 10*time.Second:   "3m10s",
		2*time.Hour + 5*time.Minute:      "2h05m",
		26*time.Hour + 59*time.Minute:    "1d02h",
		time.Hour - 200*time.Millisecond: "1h00m",
	} {
		if got := fmtTTD(d); got != want {
			t.Errorf("fmtTTD(%v) = %q, want %q", d, got, want)
		}
	}
}

// A missed run counts as flagged within grace when a missed_run alarm
// came at most the detector's stated grace plus a minute after the time
// it states for the run, that time within the run's normal reporting
// window; strictly, when it came within grace plus a minute of the
// earliest normal report. Another kind of alarm, or a missed_run alarm
// without a stated grace, does not count.
func TestScoreIncidentMissedRunWithinGrace(t *testing.T) {
	inc := Incident{Spec: IncidentSpec{Name: "missed 1 run", Kind: IncidentMissedRun, Runs: 1},
		Start: at("10:00"), Due: at("10:05"), Latest: at("10:15"), End: at("11:00")}
	cases := []struct {
		name          string
		a             Alarm
		want, wantStr bool
	}{
		{"within grace of the earliest report", Alarm{At: at("10:20"), Kind: KindMissedRun, Grace: 15 * time.Minute}, true, true},
		{"stated time a minute early", Alarm{At: at("10:19"), Kind: KindMissedRun, Grace: 15 * time.Minute}, true, true},
		{"stated time inside the spread", Alarm{At: at("10:25"), Kind: KindMissedRun, Grace: 15 * time.Minute}, true, false},
		{"stated time past the spread", Alarm{At: at("10:31"), Kind: KindMissedRun, Grace: 15 * time.Minute}, false, false},
		{"a silence", Alarm{At: at("10:10"), Kind: KindSilence}, false, false},
		{"no stated grace", Alarm{At: at("10:10"), Kind: KindMissedRun}, false, false},
	}
	for _, c := range cases {
		o := ScoreIncident("f", inc, []Alarm{c.a})
		if !o.Detected || !o.MissedRun || o.InGrace != c.want || o.InGraceStrict != c.wantStr {
			t.Errorf("%s: detected %v, missed run %v, in grace %v (strict %v); want %v (%v)", c.name, o.Detected, o.MissedRun, o.InGrace, o.InGraceStrict, c.want, c.wantStr)
		}
	}
}

// The arming bound is an event: the first one at least armDays after the
// first event, once armEvents came.
func TestScoreStreamBoundIsAnEvent(t *testing.T) {
	first := at("00:00")
	s := Stream{Info: StreamInfo{Name: "s"}, End: first.Add(30 * 24 * time.Hour)}
	for _, d := range []float64{0, 1, 2, 3, 15, 16} {
		s.Events = append(s.Events, Event{T: first.Add(time.Duration(d * 24 * float64(time.Hour))), Count: 1})
	}
	if o := ScoreStream(s, nil, first.Add(15*24*time.Hour), 14, 5); o.ArmedLate {
		t.Errorf("armed at the first event after 14 days (day 15): late")
	}
	if o := ScoreStream(s, nil, first.Add(16*24*time.Hour), 14, 5); !o.ArmedLate {
		t.Errorf("armed at day 16, one event after the bound: not late")
	}
	if o := ScoreStream(s, nil, first.Add(16*24*time.Hour), 14, 6); o.ArmedLate {
		t.Errorf("armed at the 6th event (day 16) with a bound of 6 events: late")
	}
}
