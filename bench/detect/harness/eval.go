package harness

import (
	"runtime"
	"sync"
	"time"
)

// Config sizes a synthetic evaluation.
type Config struct {
	Seed            uint64
	Families        []*Family
	IncidentStreams int // streams per family and incident spec
	CleanBeets      int // clean streams per family
	CleanDays       int // scored days per clean stream (after LearnDays)
	Workers         int // 0: GOMAXPROCS
}

// An IncidentOutcome is how a detector did on one injected incident.
type IncidentOutcome struct {
	Family, Incident string
	Detected         bool
	TTD              time.Duration // first raised alarm in the detection window − incident start
	Kind             string        // kind of that alarm
}

// A CleanOutcome is one clean stream's false alarms.
type CleanOutcome struct {
	Family   string
	Days     float64 // scored beet-days
	Alarms   int     // raised alarms in the scored part
	Describe string  // the detector's Describe(), if any
}

// An EpisodeOutcome is how a detector took one episode (Family.Episodes):
// the alarms it raised from the episode's start to its end + DetectTolerance,
// and how many of them said the beet was down (silence, missed run) while
// its events kept coming.
type EpisodeOutcome struct {
	Family, Episode string
	Alarms, Down    int
}

// Results holds every outcome of a synthetic evaluation, in a fixed order
// (family, incident spec, stream; then family, clean stream), whatever the
// scheduling of workers, so a report depends only on the seed.
type Results struct {
	Incidents []IncidentOutcome
	Clean     []CleanOutcome
	Episodes  []EpisodeOutcome
	Events    int // events replayed
}

// job is one stream to generate and score; it writes its outcome in place.
type job struct {
	fam   *Family
	spec  *IncidentSpec // nil: a clean stream
	i     int
	inc   *IncidentOutcome
	clean *CleanOutcome
	ep    *EpisodeOutcome
}

// Evaluate generates every stream of cfg, replays it through a fresh
// detector from f and scores the alarms.
func Evaluate(cfg Config, f Factory) (*Results, error) {
	res := &Results{}
	var jobs []job
	for _, fam := range cfg.Families {
		for k := range fam.Incidents {
			for i := 0; i < cfg.IncidentStreams; i++ {
				jobs = append(jobs, job{fam: fam, spec: &fam.Incidents[k], i: i})
			}
		}
	}
	nInc := len(jobs)
	for _, fam := range cfg.Families {
		for i := 0; i < cfg.CleanBeets; i++ {
			jobs = append(jobs, job{fam: fam, i: i})
		}
	}
	nClean := len(jobs) - nInc
	for _, fam := range cfg.Families {
		for k := range fam.Episodes {
			for i := 0; i < cfg.IncidentStreams; i++ {
				jobs = append(jobs, job{fam: fam, spec: &fam.Episodes[k], i: i})
			}
		}
	}
	// Outcome slots are allocated up front so workers write without locks.
	res.Incidents = make([]IncidentOutcome, nInc)
	res.Clean = make([]CleanOutcome, nClean)
	res.Episodes = make([]EpisodeOutcome, len(jobs)-nInc-nClean)
	for k := range jobs {
		switch {
		case k < nInc:
			jobs[k].inc = &res.Incidents[k]
		case k < nInc+nClean:
			jobs[k].clean = &res.Clean[k-nInc]
		default:
			jobs[k].ep = &res.Episodes[k-nInc-nClean]
		}
	}

	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				n, err := jobs[k].run(cfg, f)
				mu.Lock()
				res.Events += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for k := range jobs {
		next <- k
	}
	close(next)
	wg.Wait()
	return res, first
}

// run generates the job's stream, replays it and scores it; it returns the
// number of events replayed.
func (j job) run(cfg Config, f Factory) (int, error) {
	if j.spec == nil {
		s, err := j.fam.CleanStream(cfg.Seed, j.i, cfg.CleanDays)
		if err != nil {
			return 0, err
		}
		d := f(s.Info)
		alarms, err := Replay(d, s.Events, s.End)
		if err != nil {
			return len(s.Events), err
		}
		*j.clean = ScoreClean(s, alarms)
		if ds, ok := d.(Describer); ok {
			j.clean.Describe = ds.Describe()
		}
		return len(s.Events), nil
	}
	s, err := j.fam.IncidentStream(cfg.Seed, *j.spec, j.i)
	if err != nil {
		return 0, err
	}
	alarms, err := Replay(f(s.Info), s.Events, s.End)
	if err != nil {
		return len(s.Events), err
	}
	if j.ep != nil {
		*j.ep = ScoreEpisode(s.Info.Family, s.Incidents[0], alarms)
		return len(s.Events), nil
	}
	*j.inc = ScoreIncident(s.Info.Family, s.Incidents[0], alarms)
	return len(s.Events), nil
}

// ScoreEpisode counts the alarms raised in [Start, End+DetectTolerance] of
// an episode, and those of them that said the beet was down.
func ScoreEpisode(family string, ep Incident, alarms []Alarm) EpisodeOutcome {
	o := EpisodeOutcome{Family: family, Episode: ep.Spec.Name}
	last := ep.End.Add(DetectTolerance)
	for _, a := range alarms {
		if a.Recovery || a.At.Before(ep.Start) || a.At.After(last) {
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
	o := IncidentOutcome{Family: family, Incident: inc.Spec.Name}
	last := inc.End.Add(DetectTolerance)
	for _, a := range alarms {
		if a.Recovery || a.At.Before(inc.Start) || a.At.After(last) {
			continue
		}
		o.Detected, o.TTD, o.Kind = true, a.At.Sub(inc.Start), a.Kind
		break
	}
	return o
}

// ScoreClean counts the alarms raised on a clean stream after its learning
// part; every one is a false alarm.
func ScoreClean(s Stream, alarms []Alarm) CleanOutcome {
	o := CleanOutcome{Family: s.Info.Family, Days: s.End.Sub(s.Info.LearnEnd).Hours() / 24}
	for _, at := range Raised(alarms) {
		if !at.Before(s.Info.LearnEnd) {
			o.Alarms++
		}
	}
	return o
}
