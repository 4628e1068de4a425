package harness

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"time"
	_ "time/tzdata" // the generated streams must not depend on the host's zoneinfo
)

// Incident kinds injected into synthetic streams.
const (
	IncidentOutage    = "outage"     // no events at all for Duration
	IncidentDrop      = "drop"       // rate × Factor (< 1) for Duration
	IncidentSurge     = "surge"      // rate × Factor (> 1) for Duration
	IncidentMissedRun = "missed_run" // Runs consecutive scheduled runs do not happen
	// Runs consecutive scheduled runs each bring Extra more events (an
	// episode, not an incident: see Family.Episodes).
	IncidentExtraPings = "extra_pings"
)

// An IncidentSpec describes one kind of incident injected into a family.
type IncidentSpec struct {
	Name      string // short label for the report, e.g. "outage 6h"
	Kind      string // one of the Incident* constants
	Duration  time.Duration
	Factor    float64 // drop/surge: lower bound of the rate factor
	FactorMax float64 // surge: upper bound (drawn uniformly per incident); 0 = Factor
	Runs      int     // missed_run, extra_pings: how many consecutive runs are missed or have extras
	Extra     int     // extra_pings: extra events per run
	// ExtraGap is the time from a run to its first extra event and between
	// extras (extra_pings); 0: one extra halfway to the next slot.
	ExtraGap time.Duration
}

// An Incident is the ground truth of one injected incident. A detection is
// a raised alarm in [Start, End+DetectTolerance].
type Incident struct {
	Spec   IncidentSpec
	Start  time.Time // outage/drop/surge start; the first missed run's scheduled time
	End    time.Time // when normal traffic resumes (for missed runs and extra pings: the next run's scheduled time, or a retry loop's end)
	Factor float64   // the rate factor actually used (drop/surge)
}

// DetectTolerance is how long after an incident's end a raised alarm still
// counts as detecting it: a deadline a little past the end of a short
// outage is still that outage being noticed.
const DetectTolerance = time.Hour

// A Stream is one synthetic beet: its events and the incidents injected.
type Stream struct {
	Info      StreamInfo // History is filled in
	Events    []Event
	End       time.Time
	Incidents []Incident
}

// A Family is a kind of beet traffic, with the incidents injected into it.
type Family struct {
	Name        string
	Description string
	Zones       []string // IANA zones its beets live in; one is drawn per beet
	Incidents   []IncidentSpec
	// Episodes are traffic that is not an incident to detect but must not
	// make a detector flap: a schedule getting extra events. A detector may
	// flag one (a surge) and recover, or treat the extras as runs.
	Episodes []IncidentSpec
	newModel func(r *rand.Rand) model
}

// model generates one beet's traffic; each beet draws its own parameters.
type model interface {
	// generate returns the events in [start, end), sorted, with the
	// incidents applied.
	generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event
	// nextSlot returns the first scheduled run at or after t, for schedule
	// models; ok is false for rate models.
	nextSlot(loc *time.Location, t time.Time) (slot time.Time, ok bool)
}

// Timeline of every synthetic beet. Streams are placed around a DST change
// of their zone in 2026 so that the learned rhythm is tested across it.
const (
	LearnDays    = 28 // clean learning part: four full weeks of every hour of the week
	incidentSpan = 7  // incidents start uniformly within a week after learning
	afterDays    = 1  // traffic kept after an incident ends
	dstYear      = 2026
)

// rng returns the deterministic random source of one stream: the same seed
// and name always give the same stream, and streams do not share sequences.
func rng(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// setup draws a beet's zone and model and places its timeline so that a DST
// change of its zone falls dstAfterLearn days after the learning part ends.
func (f *Family) setup(r *rand.Rand, name string, dstAfterLearn int) (Stream, model, error) {
	loc, err := time.LoadLocation(f.Zones[r.IntN(len(f.Zones))])
	if err != nil {
		return Stream{}, nil, fmt.Errorf("synth: %s: %w", f.Name, err)
	}
	m := f.newModel(r)
	tr := dstChanges(loc, dstYear)
	anchor := time.Date(dstYear, 3, 1, 0, 0, 0, 0, loc)
	if len(tr) > 0 {
		anchor = tr[r.IntN(len(tr))]
	}
	d := anchor.In(loc).AddDate(0, 0, -(LearnDays + dstAfterLearn))
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	s := Stream{Info: StreamInfo{
		Name: name, Family: f.Name, Location: loc, Start: start,
		LearnEnd: start.AddDate(0, 0, LearnDays),
	}}
	return s, m, nil
}

// dstChanges returns the instants at which loc's UTC offset changes in year.
func dstChanges(loc *time.Location, year int) []time.Time {
	var out []time.Time
	t := time.Date(year, 1, 1, 0, 0, 0, 0, loc)
	for {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.Year() > year {
			return out
		}
		out = append(out, end)
		t = end
	}
}

// IncidentStream generates stream i of family f with one incident of spec:
// LearnDays of clean traffic, then the incident starting at a uniformly
// random time within the following week (so at any hour of the week, near
// the DST change), then afterDays of normal traffic.
func (f *Family) IncidentStream(seed uint64, spec IncidentSpec, i int) (Stream, error) {
	name := fmt.Sprintf("%s/%s/%d", f.Name, spec.Name, i)
	r := rng(seed, name)
	s, m, err := f.setup(r, name, 3)
	if err != nil {
		return s, err
	}
	u := s.Info.LearnEnd.Add(time.Duration(r.Int64N(int64(incidentSpan * 24 * time.Hour))))
	inc := Incident{Spec: spec}
	switch spec.Kind {
	case IncidentMissedRun, IncidentExtraPings:
		slot, ok := m.nextSlot(s.Info.Location, u)
		if !ok {
			return s, fmt.Errorf("synth: %s: %s needs a schedule family", name, spec.Kind)
		}
		inc.Start = slot
		for k := 0; k < spec.Runs; k++ {
			slot, _ = m.nextSlot(s.Info.Location, slot.Add(time.Second))
		}
		inc.End = slot
		if spec.Kind == IncidentExtraPings {
			// Extras may run on past the next slot (a retry loop).
			inc.End = maxTime(inc.End, inc.Start.Add(time.Duration(spec.Extra)*spec.ExtraGap))
		}
	case IncidentOutage, IncidentDrop, IncidentSurge:
		inc.Start = u.Truncate(time.Minute)
		inc.End = inc.Start.Add(spec.Duration)
		inc.Factor = spec.Factor
		if spec.FactorMax > spec.Factor {
			inc.Factor += r.Float64() * (spec.FactorMax - spec.Factor)
		}
	default:
		return s, fmt.Errorf("synth: %s: unknown incident kind %q", name, spec.Kind)
	}
	s.Incidents = []Incident{inc}
	s.End = inc.End.AddDate(0, 0, afterDays)
	s.Events = m.generate(r, s.Info.Location, s.Info.Start, s.End, s.Incidents)
	s.fillHistory()
	return s, nil
}

// CleanStream generates clean beet i of family f: LearnDays of learning and
// then days scored days with no incident, a DST change ten days in.
func (f *Family) CleanStream(seed uint64, i, days int) (Stream, error) {
	name := fmt.Sprintf("%s/clean/%d", f.Name, i)
	r := rng(seed, name)
	s, m, err := f.setup(r, name, 10)
	if err != nil {
		return s, err
	}
	s.End = s.Info.LearnEnd.AddDate(0, 0, days)
	s.Events = m.generate(r, s.Info.Location, s.Info.Start, s.End, nil)
	s.fillHistory()
	return s, nil
}

func (s *Stream) fillHistory() {
	n := sort.Search(len(s.Events), func(i int) bool { return !s.Events[i].T.Before(s.Info.LearnEnd) })
	s.Info.History = s.Events[:n:n]
}

// removeOutages drops events inside outages (a cluster that started just
// before an outage must not leak into it) and sorts what is left.
func removeOutages(evs []Event, inc []Incident) []Event {
	sort.Slice(evs, func(i, j int) bool { return evs[i].T.Before(evs[j].T) })
	out := evs[:0]
	for _, e := range evs {
		keep := true
		for _, in := range inc {
			if in.Spec.Kind == IncidentOutage && !e.T.Before(in.Start) && e.T.Before(in.End) {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

// rateModel is seasonal traffic: a non-homogeneous Poisson process with
// rate perHour × hour-of-day factor × day-of-week factor in local time,
// optionally overdispersed (a Gamma multiplier per real hour makes hourly
// counts negative-binomial, and a milder one per day makes slow and busy
// days), optionally bursty (each arrival is a cluster of events).
type rateModel struct {
	perHour  float64     // weekly mean arrivals per hour
	hour     [24]float64 // mean 1
	dow      [7]float64  // mean 1, indexed by time.Weekday
	nbShape  float64     // hourly Gamma shape r (0: Poisson); variance m + m²/r
	dayShape float64     // daily Gamma shape (0: none)
	cluster  bool        // each arrival is a burst of events
	meanSize float64     // mean events per burst
	burstGap float64     // mean seconds between events of a burst
}

// newSeasonal draws a beet's weekly profile: a daytime bump whose peak hour,
// width and night floor vary per beet, and a weekend level.
func newSeasonal(r *rand.Rand, perHour float64) *rateModel {
	m := &rateModel{perHour: perHour}
	floor := 0.05 + 0.35*r.Float64()
	peak := 11 + 9*r.Float64()
	width := 3 + 3*r.Float64()
	sum := 0.0
	for h := range m.hour {
		d := math.Abs(float64(h) + 0.5 - peak)
		d = math.Min(d, 24-d)
		m.hour[h] = floor + (1-floor)*math.Exp(-0.5*(d/width)*(d/width))
		sum += m.hour[h]
	}
	for h := range m.hour {
		m.hour[h] *= 24 / sum
	}
	weekend := 0.4 + 0.6*r.Float64()
	sum = 0
	for d := range m.dow {
		m.dow[d] = 1
		if time.Weekday(d) == time.Saturday || time.Weekday(d) == time.Sunday {
			m.dow[d] = weekend
		}
		sum += m.dow[d]
	}
	for d := range m.dow {
		m.dow[d] *= 7 / sum
	}
	return m
}

func (m *rateModel) nextSlot(*time.Location, time.Time) (time.Time, bool) { return time.Time{}, false }

func (m *rateModel) generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event {
	// Breakpoints: every real hour (the rate is constant within a local
	// hour; all zones used have whole-hour offsets) and every incident edge.
	// Walking real hours means a DST fall-back hour is lived twice and a
	// spring-forward hour not at all, as real traffic does.
	cuts := []time.Time{}
	for _, in := range inc {
		cuts = append(cuts, in.Start, in.End)
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	var evs []Event
	hourMult, dayMult := 1.0, 1.0
	lastDay := -1
	for h := start.Truncate(time.Hour); h.Before(end); h = h.Add(time.Hour) {
		lt := h.In(loc)
		if m.nbShape > 0 {
			hourMult = gamma(r, m.nbShape) / m.nbShape
		}
		if day := lt.YearDay(); m.dayShape > 0 && day != lastDay {
			dayMult, lastDay = gamma(r, m.dayShape)/m.dayShape, day
		}
		base := m.perHour * m.hour[lt.Hour()] * m.dow[lt.Weekday()] * hourMult * dayMult
		segStart, hEnd := maxTime(h, start), minTime(h.Add(time.Hour), end)
		for segStart.Before(hEnd) {
			segEnd := hEnd
			for _, c := range cuts {
				if c.After(segStart) && c.Before(segEnd) {
					segEnd = c
				}
			}
			rate := base * incidentFactor(inc, segStart)
			evs = m.arrivals(r, evs, segStart, segEnd, rate)
			segStart = segEnd
		}
	}
	evs = removeOutages(evs, inc) // also sorts: bursts overlap
	for len(evs) > 0 && !evs[len(evs)-1].T.Before(end) {
		evs = evs[:len(evs)-1] // a burst spilling past the end of the stream
	}
	return evs
}

// arrivals appends the arrivals of a Poisson process of rate per hour on
// [a, b): exponential gaps, restarted at each segment, which is exact
// because the process is memoryless.
func (m *rateModel) arrivals(r *rand.Rand, evs []Event, a, b time.Time, rate float64) []Event {
	if rate <= 0 {
		return evs
	}
	t := a
	for {
		t = t.Add(time.Duration(r.ExpFloat64() / rate * float64(time.Hour)))
		if !t.Before(b) {
			return evs
		}
		if !m.cluster {
			evs = append(evs, Event{T: t, Count: 1})
			continue
		}
		// A burst: 1 + geometric(meanSize-1) events, exponential gaps.
		n := 1
		for r.Float64() < 1-1/m.meanSize {
			n++
		}
		bt := t
		for k := 0; k < n; k++ {
			evs = append(evs, Event{T: bt, Count: 1})
			bt = bt.Add(time.Duration(r.ExpFloat64() * m.burstGap * float64(time.Second)))
		}
	}
}

// incidentFactor is the rate factor in force at t.
func incidentFactor(inc []Incident, t time.Time) float64 {
	f := 1.0
	for _, in := range inc {
		if t.Before(in.Start) || !t.Before(in.End) {
			continue
		}
		switch in.Spec.Kind {
		case IncidentOutage:
			f = 0
		case IncidentDrop, IncidentSurge:
			f *= in.Factor
		}
	}
	return f
}

// cronModel is a scheduled job: either daily at a local wall-clock time
// (which moves in UTC across DST) or every interval of real time (as cron
// runs "*/5 * * * *" and "17 * * * *" jobs: each real hour, DST or not). Each
// run reports once, displaced by a uniform jitter.
type cronModel struct {
	dailyHour, dailyMin  int           // daily job time, local (when every == 0)
	every                time.Duration // interval job
	offset               time.Duration // interval job: phase within the interval
	jitterMin, jitterMax time.Duration
}

func (m *cronModel) nextSlot(loc *time.Location, t time.Time) (time.Time, bool) {
	if m.every > 0 {
		s := t.Truncate(m.every).Add(m.offset)
		for s.Before(t) {
			s = s.Add(m.every)
		}
		return s, true
	}
	lt := t.In(loc)
	for d := 0; ; d++ {
		day := lt.AddDate(0, 0, d)
		s := time.Date(day.Year(), day.Month(), day.Day(), m.dailyHour, m.dailyMin, 0, 0, loc)
		if !s.Before(t) {
			return s, true
		}
	}
}

func (m *cronModel) generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event {
	var evs []Event
	extraRuns := make([]int, len(inc)) // runs given their extras so far, per incident
	for s, _ := m.nextSlot(loc, start); s.Before(end); s, _ = m.nextSlot(loc, s.Add(time.Second)) {
		missed := false
		for _, in := range inc {
			if in.Spec.Kind == IncidentMissedRun && !s.Before(in.Start) && s.Before(in.End) {
				missed = true
			}
		}
		if missed {
			continue
		}
		j := m.jitterMin + time.Duration(r.Int64N(int64(m.jitterMax-m.jitterMin)+1))
		t := s.Add(j)
		if !t.Before(start) && t.Before(end) {
			evs = append(evs, Event{T: t, Count: 1})
		}
		for k, in := range inc {
			if in.Spec.Kind != IncidentExtraPings || s.Before(in.Start) || extraRuns[k] == in.Spec.Runs {
				continue
			}
			extraRuns[k]++
			gap := in.Spec.ExtraGap
			if gap == 0 {
				next, _ := m.nextSlot(loc, s.Add(time.Second))
				gap = next.Sub(s) / 2
			}
			for k := 1; k <= in.Spec.Extra; k++ {
				if e := t.Add(time.Duration(k) * gap); !e.Before(start) && e.Before(end) {
					evs = append(evs, Event{T: e, Count: 1})
				}
			}
		}
	}
	return removeOutages(evs, inc)
}

// gamma draws Gamma(shape, 1) by Marsaglia and Tsang's method (shape ≥ 1;
// smaller shapes use the x·U^(1/shape) boost).
func gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
