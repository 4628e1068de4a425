package detectjudge

import (
	"runtime"
	"sync"
	"time"
)

// Splits of the seeds. Parameters are chosen on the tuning split and the
// numbers are reported on the held-out split, which is never tuned on.
// Streams are drawn from PCG(seed, hash(stream name)), so the two seeds
// give disjoint, independent sets of streams.
const (
	SplitTune    = "tune"
	SplitHoldout = "holdout"
	SeedTune     = 1
	SeedHoldout  = 2
)

// SeedOf returns the seed of a split, and false for an unknown split.
func SeedOf(split string) (uint64, bool) {
	switch split {
	case SplitTune:
		return SeedTune, true
	case SplitHoldout:
		return SeedHoldout, true
	}
	return 0, false
}

// Config sizes a synthetic evaluation.
type Config struct {
	Seed            uint64
	Families        []*Family
	IncidentStreams int // streams per family and incident spec (and episode spec)
	CleanStreams    int // streams per family with no incident
	Workers         int // 0: GOMAXPROCS
	// ArmDays and ArmEvents are the arming bound the detector states: a
	// stream must be armed by its first event at or after ArmDays after
	// its first event and its ArmEvents-th event, whichever is later (a
	// detector arms at an event). Auto's bound (DETECTION.md, "Never
	// silently unarmed") is 14 days given 5 events: DefaultArmDays and
	// DefaultArmEvents.
	ArmDays   float64
	ArmEvents int
}

// The arming bound auto states (DETECTION.md): 14 days after the first
// event, given 5 events by then.
const (
	DefaultArmDays   = 14
	DefaultArmEvents = 5
)

// An IncidentOutcome is how a detector did on one injected incident.
type IncidentOutcome struct {
	Family, Incident string
	Stream           string // the stream's name, to replay it (-dump)
	Detectable       bool
	Detected         bool
	TTD              time.Duration // first raised alarm in the detection window − incident start
	Kind             string        // kind of that alarm
	// Alarms counts the alarms raised in the detection window by a beet
	// not in alarm (not a drop escalated to a silence): one incident
	// should raise one; more is a flapping beet (a drop's gaps each
	// flagged as a silence, each next event a recovery, then a new drop).
	Alarms int
	// Missed runs: InGrace says the run was flagged as missed (a
	// missed_run alarm) within the grace the detector stated for it plus
	// GraceSlack after the time it states for the run (the alarm's time
	// less its grace), that time lying within the run's normal reporting
	// window [Due, Latest] (so that no detector passes by stating a late
	// time). InGraceStrict counts from Due, the earliest a normal run
	// reports, instead: a detector whose stated time sits inside the
	// runs' spread needs that much more.
	MissedRun, InGrace, InGraceStrict bool
	// Yardstick is the reference detector this incident is measured
	// against ("" none; see yardstick.go); YardFound says it found the
	// incident, YardTTD how long it took from the incident's start.
	Yardstick string
	YardFound bool
	YardTTD   time.Duration
	// Learning says the incident started while the detector was still
	// learning (before it armed).
	Learning bool
}

// GraceSlack is what the judge allows beyond a detector's stated grace
// for flagging a missed run (issue 12: "within grace plus a minute").
const GraceSlack = time.Minute

// A StreamOutcome is what one stream tells about false alarms and arming.
type StreamOutcome struct {
	Family string
	Name   string
	// First is the stream's first event (a false alarm's day of the
	// stream, in -trace, counts from it).
	First time.Time
	// Days are the beet-days judged for false alarms: from the first event
	// to the end, less the incident's detection window and excused windows.
	Days float64
	// False is every false alarm, in time order (-dump the stream from
	// the first, -trace lists them).
	False []Alarm
	// ArmedAfter is the time from the first event to arming (-1: never);
	// ArmedLate says the stream was not armed within the stated bound.
	ArmedAfter time.Duration
	ArmedLate  bool
	// LearningDays are the judged beet-days before the detector armed
	// (all of them if it never did), and LearningFalse the false alarms
	// raised in them: in False too, and reported apart.
	LearningDays  float64
	LearningFalse int
}

// An EpisodeOutcome is how a detector took one excused window: the alarms
// it raised there, and how many of them said the beet was down (silence,
// missed run) while its events kept coming.
type EpisodeOutcome struct {
	Family, Episode string
	Alarms, Down    int
}

// Results holds every outcome of a synthetic evaluation, in a fixed order
// (family, spec, stream), whatever the scheduling of workers, so a report
// depends only on the seed.
type Results struct {
	Incidents []IncidentOutcome
	Streams   []StreamOutcome
	Episodes  []EpisodeOutcome
	Events    int // events replayed
}

// job is one stream to generate and score.
type job struct {
	fam  *Family
	spec *IncidentSpec // nil: a clean stream
	i    int
	// outcomes, written by the worker
	inc    *IncidentOutcome
	stream StreamOutcome
	eps    []EpisodeOutcome
	events int
	err    error
}

// forEach calls run(i) for i in [0, n) on workers goroutines (0:
// GOMAXPROCS), and returns when every call has.
func forEach(n, workers int, run func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, max(n, 1)) {
		wg.Go(func() {
			for i := range next {
				run(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Evaluate generates every stream of cfg, replays it through a fresh
// detector from f and scores the alarms. Streams run in parallel on
// cfg.Workers goroutines.
func Evaluate(cfg Config, f Factory) (*Results, error) {
	var jobs []*job
	for _, fam := range cfg.Families {
		for i := 0; i < cfg.CleanStreams; i++ {
			jobs = append(jobs, &job{fam: fam, i: i})
		}
		for _, list := range [][]IncidentSpec{fam.Incidents, fam.Episodes} {
			for k := range list {
				for i := 0; i < cfg.IncidentStreams; i++ {
					jobs = append(jobs, &job{fam: fam, spec: &list[k], i: i})
				}
			}
		}
	}
	forEach(len(jobs), cfg.Workers, func(i int) { jobs[i].run(cfg, f) })

	res := &Results{}
	for _, j := range jobs {
		if j.err != nil {
			return res, j.err
		}
		res.Events += j.events
		res.Streams = append(res.Streams, j.stream)
		if j.inc != nil {
			res.Incidents = append(res.Incidents, *j.inc)
		}
		res.Episodes = append(res.Episodes, j.eps...)
	}
	return res, nil
}

// run generates the job's stream, replays it and scores it.
func (j *job) run(cfg Config, f Factory) {
	var s Stream
	if j.spec == nil {
		s, j.err = j.fam.CleanStream(cfg.Seed, j.i)
	} else {
		s, j.err = j.fam.IncidentStream(cfg.Seed, *j.spec, j.i)
	}
	if j.err != nil {
		return
	}
	j.events = len(s.Events)
	d := f(s.Info)
	alarms, err := Replay(d, s.Events, s.End)
	if err != nil {
		j.err = err
		return
	}
	j.stream = ScoreStream(s, alarms, armedAt(d, s), cfg.ArmDays, cfg.ArmEvents)
	for _, in := range s.Incidents {
		if in.Spec.Kind == IncidentExtra {
			continue
		}
		o := ScoreIncident(s.Info.Family, in, alarms)
		o.Stream = s.Info.Name
		armed := armedAt(d, s)
		o.Learning = armed.IsZero() || in.Start.Before(armed)
		j.inc = &o
	}
	for _, w := range s.Excused {
		j.eps = append(j.eps, ScoreEpisode(s.Info.Family, w, alarms))
	}
}

// armedAt asks the detector when it armed; a detector that does not say is
// armed from the first event.
func armedAt(d Detector, s Stream) time.Time {
	if a, ok := d.(Armer); ok {
		return a.ArmedAt()
	}
	if len(s.Events) == 0 {
		return time.Time{}
	}
	return s.Events[0].T
}

// ScoreEpisode counts the alarms raised in an excused window, and those of
// them that said the beet was down.
func ScoreEpisode(family string, w Window, alarms []Alarm) EpisodeOutcome {
	o := EpisodeOutcome{Family: family, Episode: w.Name}
	for _, a := range alarms {
		if a.Recovery || a.At.Before(w.From) || a.At.After(w.To) {
			continue
		}
		o.Alarms++
		if a.Kind == KindSilence || a.Kind == KindMissedRun {
			o.Down++
		}
	}
	return o
}

// ScoreIncident finds the first raised alarm in [Start, End+DetectTolerance]
// of inc. Alarms raised earlier do not count even if still open: an alert
// the user already has says nothing about this incident.
func ScoreIncident(family string, inc Incident, alarms []Alarm) IncidentOutcome {
	o := IncidentOutcome{Family: family, Incident: inc.Spec.Name, Detectable: inc.Detectable,
		MissedRun: inc.Spec.Kind == IncidentMissedRun && !inc.Due.IsZero()}
	last := inc.End.Add(DetectTolerance)
	if o.Yardstick = inc.Yardstick; !inc.YardAt.IsZero() && !inc.YardAt.Before(inc.Start) && !inc.YardAt.After(last) {
		o.YardFound, o.YardTTD = true, inc.YardAt.Sub(inc.Start)
	}
	open := false
	for _, a := range alarms {
		if !a.Recovery && !open && !a.At.Before(inc.Start) && !a.At.After(last) {
			o.Alarms++
		}
		open = !a.Recovery
	}
	for _, a := range alarms {
		if a.Recovery || a.At.Before(inc.Start) || a.At.After(last) {
			continue
		}
		o.Detected, o.TTD, o.Kind = true, a.At.Sub(inc.Start), a.Kind
		if o.MissedRun && a.Kind == KindMissedRun && a.Grace > 0 {
			stated := a.At.Add(-a.Grace)
			o.InGrace = !stated.Before(inc.Due.Add(-GraceSlack)) && !stated.After(inc.Latest) && a.At.Sub(stated) <= a.Grace+GraceSlack
			o.InGraceStrict = a.At.Sub(inc.Due) <= a.Grace+GraceSlack
		}
		break
	}
	return o
}

// ScoreStream counts a stream's false alarms, from its first event on
// (learning included): every raised alarm outside the detection windows of
// its incidents and outside its excused windows. It also says how long the
// detector took to arm (armed zero: never) and whether that was within the
// bound: armDays after the first event or the armEvents-th event,
// whichever is later.
func ScoreStream(s Stream, alarms []Alarm, armed time.Time, armDays float64, armEvents int) StreamOutcome {
	o := StreamOutcome{Family: s.Info.Family, Name: s.Info.Name, ArmedAfter: -1}
	if len(s.Events) == 0 {
		return o
	}
	first := s.Events[0].T
	o.First = first
	var skip []Window
	for _, in := range s.Incidents {
		if in.Spec.Kind != IncidentExtra {
			skip = append(skip, Window{From: in.Start, To: in.End.Add(DetectTolerance)})
		}
	}
	skip = append(skip, s.Excused...)
	judged := s.End.Sub(first)
	for _, w := range skip { // windows never overlap: incidents come long after a schedule change
		judged -= max(0, minTime(w.To, s.End).Sub(maxTime(w.From, first)))
	}
	o.Days = max(0, judged.Hours()/24)
	// The learning part: from the first event to arming (or the end).
	learnEnd := s.End
	if !armed.IsZero() {
		learnEnd = maxTime(first, minTime(armed, s.End))
	}
	learning := learnEnd.Sub(first)
	for _, w := range skip {
		learning -= max(0, minTime(w.To, learnEnd).Sub(maxTime(w.From, first)))
	}
	o.LearningDays = max(0, learning.Hours()/24)
	for _, a := range alarms {
		if a.Recovery {
			continue
		}
		inside := false
		for _, w := range skip {
			inside = inside || !a.At.Before(w.From) && !a.At.After(w.To)
		}
		if inside {
			continue
		}
		o.False = append(o.False, a)
		if a.At.Before(learnEnd) {
			o.LearningFalse++
		}
	}
	// The bound: the first event at or after armDays, once armEvents came.
	after := first.Add(time.Duration(armDays * 24 * float64(time.Hour)))
	bound, seen := s.End, 0 // s.End: the stream never reached the bound
	for _, e := range s.Events {
		if seen += e.Count; seen >= armEvents && !e.T.Before(after) {
			bound = e.T
			break
		}
	}
	if !armed.IsZero() {
		o.ArmedAfter = max(0, armed.Sub(first))
	}
	o.ArmedLate = armed.IsZero() && bound.Before(s.End) || armed.After(bound)
	return o
}
