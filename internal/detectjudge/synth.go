package detectjudge

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the generated streams must not depend on the host's zoneinfo
)

// Incident kinds injected into synthetic streams.
const (
	IncidentOutage    = "outage"      // no events at all for Duration
	IncidentDrop      = "drop"        // arrival rate × Factor (< 1) for Duration
	IncidentSurge     = "surge"       // arrival rate × Factor (> 1) for Duration
	IncidentMissedRun = "missed_run"  // Runs consecutive runs (or every run for Duration) do not happen
	IncidentLateRun   = "late_run"    // one run reports far later than any normal run
	IncidentStuck     = "stuck"       // a run pings its start, never its end, and blocks the next runs for Duration
	IncidentExtra     = "extra_pings" // an episode, not an incident: Runs runs each bring Extra more events
	IncidentTooOften  = "too_often"   // a job runs PerPeriod times a period instead of once, for Duration
)

// An IncidentSpec describes one kind of incident injected into a family.
type IncidentSpec struct {
	Name      string // short label for the report, e.g. "outage 6h"
	Kind      string // one of the Incident* constants
	Duration  time.Duration
	Factor    float64 // drop/surge: lower bound of the rate factor
	FactorMax float64 // surge: upper bound (drawn uniformly per incident); 0 = Factor
	Runs      int     // missed_run, extra_pings: how many consecutive runs
	Extra     int     // extra_pings: extra events per run
	// ExtraGap is the time from a run to its first extra event and between
	// extras (extra_pings); 0: one extra halfway to the next slot.
	ExtraGap time.Duration
	// PerPeriod is, for too_often, how many runs come per period of the
	// schedule (evenly spaced) instead of one.
	PerPeriod int
	// Day and DayMax place the incident's start uniformly in [Day, DayMax)
	// days after the stream starts, in the learning weeks (0: after the
	// family's clean days, as usual). Day 1 is "day 2" of the beet's life.
	Day, DayMax float64
}

// firstWeek says whether the spec is placed by Day (a first-week incident).
func (s IncidentSpec) firstWeek() bool { return s.DayMax > 0 }

// An Incident is the ground truth of one injected incident (or episode). A
// detection is a raised alarm in [Start, End+DetectTolerance].
type Incident struct {
	Spec  IncidentSpec
	Start time.Time // outage/drop/surge start; for schedules the first affected run's slot
	End   time.Time // when normal traffic resumes (late run: when it finally reports)
	// Due is, for a missed run, when it would at the earliest have
	// reported (its slot plus the shortest run, or the slot with a start
	// ping), and Latest the latest a normal run reports: "flagged within
	// grace" is judged against them (ScoreIncident).
	Due, Latest time.Time
	Factor      float64 // the rate factor actually used (drop/surge)
	// Arrivals is how many arrivals (single events, or bursts for bursty
	// sources) the generator produced in [Start, End): the count the oracle
	// judges (see Detectable).
	Arrivals int
	// Detectable says whether an oracle that knows the generating process
	// could tell this incident from normal traffic (see oracle.go), and
	// PValue is the probability of traffic at least this extreme under
	// normal operation (0 for a schedule incident outside normal support).
	Detectable bool
	PValue     float64
	// Yardstick names the reference detector this incident's time to
	// detect is compared with ("oracle" for silences, "cusum" for drops
	// and surges, "" none; see yardstick.go), and YardAt is when it alarms
	// (zero: it does not find the incident within [Start, End+DetectTolerance]).
	Yardstick string
	YardAt    time.Time
}

// DetectTolerance is how long after an incident's end a raised alarm still
// counts as detecting it: a deadline a little past the end of a short
// outage is still that outage being noticed.
const DetectTolerance = time.Hour

// A Window is an interval [From, To] whose alarms are neither detections nor
// false alarms but reported apart: a schedule that gets extra events, or a
// job whose schedule the user changed.
type Window struct {
	Name     string
	From, To time.Time
}

// A Stream is one synthetic beet: its events and the incidents injected.
type Stream struct {
	Info      StreamInfo // History is filled in
	Events    []Event
	End       time.Time
	Incidents []Incident
	Excused   []Window
	// Traffic is the zone the traffic follows; Info.Location is the beet's
	// zone, which the wrong-zone families leave at UTC.
	Traffic *time.Location
	model   model // the generating process (for tests)
}

// Defaults of a family's timeline.
const (
	DefaultDays         = 56 // eight weeks per stream
	DefaultIncidentFrom = 14 // incidents start after two clean weeks
	afterDays           = 1  // normal traffic kept after an incident ends
	dstYear             = 2026
)

// A Family is a kind of beet traffic, with the incidents injected into it.
type Family struct {
	Name        string
	Description string
	Schedule    bool     // a scheduled job (schedule incidents), not a rate stream
	Zones       []string // IANA zones its traffic lives in; one is drawn per beet
	BeetZone    string   // the beet's zone when it is not the traffic's (a beet left at UTC)
	Days        int      // stream length (0: DefaultDays)
	// IncidentFrom is how many days of clean traffic come before an
	// incident may start (0: DefaultIncidentFrom); a schedule incident also
	// waits for minRunsBefore runs.
	IncidentFrom int
	Incidents    []IncidentSpec
	// Episodes are traffic that is not an incident to detect but must not
	// make a detector flap: a schedule getting extra events.
	Episodes []IncidentSpec
	// SetupFrom and SetupTo, when set, are local hours between which the
	// beet is set up on its first day (the stream starts at a random
	// minute there, not at midnight): a job first seen mid-afternoon has
	// not shown its night hours yet.
	SetupFrom, SetupTo int
	// Untuned families were added after the detector's parameters were
	// chosen and must stay out of any tuning: the report shows them apart.
	Untuned  bool
	newModel func(r *rand.Rand) model
}

func (f *Family) days() int {
	if f.Days > 0 {
		return f.Days
	}
	return DefaultDays
}

func (f *Family) incidentFrom() int {
	if f.IncidentFrom > 0 {
		return f.IncidentFrom
	}
	return DefaultIncidentFrom
}

// model generates one beet's traffic; each beet draws its own parameters.
type model interface {
	// generate returns the events in [start, end), sorted, with the
	// incidents applied; it fills in each incident's Arrivals.
	generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event
	// place sets the timing of inc (Start, End, Factor) at or after u,
	// drawing from r; it returns false if the incident kind does not apply.
	place(r *rand.Rand, loc *time.Location, u time.Time, inc *Incident) bool
	// judge sets inc.Detectable and inc.PValue from the true process.
	judge(loc *time.Location, streamStart time.Time, inc *Incident)
	// yardstick sets inc.Yardstick and inc.YardAt: when a reference
	// detector that knows the process alarms (yardstick.go). It runs after
	// generate and judge, and may use what generate recorded.
	yardstick(loc *time.Location, streamStart time.Time, inc *Incident)
	// settled is the earliest time incidents may start on this beet, beyond
	// the family's clean days (a schedule change, a monthly job's runs).
	settled(loc *time.Location, start time.Time) time.Time
	// excused returns windows whose alarms are not false alarms.
	excused(loc *time.Location, start, end time.Time) []Window
}

// rng returns the deterministic random source of one stream: the same seed
// and name always give the same stream, and streams do not share sequences.
func rng(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// setup draws a beet's zones and model and places its timeline so that a
// DST change of the traffic's zone falls in the part where incidents may
// happen (spring or autumn, whichever the draw picks).
func (f *Family) setup(r *rand.Rand, name string) (Stream, model, error) {
	traffic, err := time.LoadLocation(f.Zones[r.IntN(len(f.Zones))])
	if err != nil {
		return Stream{}, nil, fmt.Errorf("synth: %s: %w", f.Name, err)
	}
	beetLoc := traffic
	if f.BeetZone != "" {
		if beetLoc, err = time.LoadLocation(f.BeetZone); err != nil {
			return Stream{}, nil, fmt.Errorf("synth: %s: %w", f.Name, err)
		}
	}
	m := f.newModel(r)
	days := f.days()
	tr := dstChanges(traffic, dstYear)
	if len(tr) == 0 {
		tr = dstChanges(beetLoc, dstYear) // a server's UTC clock: the beet's zone changes
	}
	anchor := time.Date(dstYear, 3, 1, 0, 0, 0, 0, traffic)
	if len(tr) > 0 {
		anchor = tr[r.IntN(len(tr))]
	}
	from := f.incidentFrom()
	dstDay := from + r.IntN(max(1, days-from-7))
	d := anchor.In(traffic).AddDate(0, 0, -dstDay)
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, traffic)
	if f.SetupTo > f.SetupFrom {
		start = start.Add(time.Duration(f.SetupFrom*60+r.IntN((f.SetupTo-f.SetupFrom)*60)) * time.Minute)
	}
	s := Stream{Info: StreamInfo{
		Name: name, Family: f.Name, Location: beetLoc, Start: start,
		LearnEnd: start.AddDate(0, 0, from),
	}, Traffic: traffic, End: start.AddDate(0, 0, days), model: m}
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

// IncidentStream generates stream i of family f with one incident of spec,
// starting at a uniformly random time after the family's clean days and
// ending at least a day before the stream does.
func (f *Family) IncidentStream(seed uint64, spec IncidentSpec, i int) (Stream, error) {
	name := fmt.Sprintf("%s/%s/%d", f.Name, spec.Name, i)
	r := rng(seed, name)
	s, m, err := f.setup(r, name)
	if err != nil {
		return s, err
	}
	from := maxTime(s.Info.LearnEnd, m.settled(s.Traffic, s.Info.Start))
	latest := s.End.AddDate(0, 0, -afterDays).Add(-spec.Duration)
	if spec.firstWeek() {
		from = s.Info.Start.Add(days(spec.Day))
		latest = minTime(latest, s.Info.Start.Add(days(spec.DayMax)))
	}
	if !latest.After(from) {
		return s, fmt.Errorf("synth: %s: no room for %s in %d days", name, spec.Name, f.days())
	}
	inc := Incident{Spec: spec}
	placed := false
	for try := 0; try < 50 && !placed; try++ {
		u := from.Add(time.Duration(r.Int64N(int64(latest.Sub(from)))))
		placed = m.place(r, s.Traffic, u, &inc) && !inc.End.After(s.End.AddDate(0, 0, -afterDays))
	}
	if !placed {
		return s, fmt.Errorf("synth: %s: cannot place %s (%s) on this family", name, spec.Name, spec.Kind)
	}
	s.Incidents = []Incident{inc}
	s.Events = m.generate(r, s.Traffic, s.Info.Start, s.End, s.Incidents)
	if spec.Kind == IncidentExtra {
		s.Excused = append(s.Excused, Window{Name: spec.Name, From: inc.Start, To: inc.End.Add(DetectTolerance)})
	} else {
		m.judge(s.Traffic, s.Info.Start, &s.Incidents[0])
		m.yardstick(s.Traffic, s.Info.Start, &s.Incidents[0])
	}
	s.Excused = append(s.Excused, m.excused(s.Traffic, s.Info.Start, s.End)...)
	s.fillHistory()
	return s, nil
}

// CleanStream generates clean beet i of family f: no incident at all.
func (f *Family) CleanStream(seed uint64, i int) (Stream, error) {
	name := fmt.Sprintf("%s/clean/%d", f.Name, i)
	r := rng(seed, name)
	s, m, err := f.setup(r, name)
	if err != nil {
		return s, err
	}
	s.Events = m.generate(r, s.Traffic, s.Info.Start, s.End, nil)
	s.Excused = m.excused(s.Traffic, s.Info.Start, s.End)
	s.fillHistory()
	return s, nil
}

func (s *Stream) fillHistory() {
	n := sort.Search(len(s.Events), func(i int) bool { return !s.Events[i].T.Before(s.Info.LearnEnd) })
	s.Info.History = s.Events[:n:n]
}

// covers reports whether t is in [in.Start, in.End).
func (in *Incident) covers(t time.Time) bool { return !t.Before(in.Start) && t.Before(in.End) }

// removeOutages drops events inside outages (a cluster that started just
// before an outage must not leak into it) and sorts what is left.
func removeOutages(evs []Event, inc []Incident) []Event {
	sort.Slice(evs, func(i, j int) bool { return evs[i].T.Before(evs[j].T) })
	out := evs[:0]
	for _, e := range evs {
		keep := true
		for k := range inc {
			if inc[k].Spec.Kind == IncidentOutage && inc[k].covers(e.T) {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

// days is d days as a duration.
func days(d float64) time.Duration { return time.Duration(d * 24 * float64(time.Hour)) }

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

// StreamByName regenerates one stream from its name as reports print it:
// "family/clean/i" or "family/incident name/i".
func StreamByName(seed uint64, name string) (Stream, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return Stream{}, fmt.Errorf("stream %q: want family/clean/N or family/incident/N", name)
	}
	i, err := strconv.Atoi(parts[2])
	if err != nil || i < 0 {
		return Stream{}, fmt.Errorf("stream %q: %q is not a stream number", name, parts[2])
	}
	fams, _ := FilterFamilies(Families(), parts[0])
	if len(fams) != 1 {
		return Stream{}, fmt.Errorf("stream %q: no family %q", name, parts[0])
	}
	f := fams[0]
	if parts[1] == "clean" {
		return f.CleanStream(seed, i)
	}
	for _, list := range [][]IncidentSpec{f.Incidents, f.Episodes} {
		for _, sp := range list {
			if sp.Name == parts[1] {
				return f.IncidentStream(seed, sp, i)
			}
		}
	}
	return Stream{}, fmt.Errorf("stream %q: family %s has no incident %q", name, f.Name, parts[1])
}

// WriteCSV writes s in the `beet backtest` input format (CONTRACT §4), with
// what the judge knows about it as # comments.
func (s Stream) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s: beet zone %s, traffic in %s, %s to %s\n", s.Info.Name, s.Info.Location, s.Traffic,
		s.Info.Start.UTC().Format(time.RFC3339), s.End.UTC().Format(time.RFC3339))
	// The beet's zone is part of what the judge replayed: auto mode learns
	// by its local hours and days.
	fmt.Fprintf(bw, "# replay: beet backtest --timezone %s < this file\n", s.Info.Location)
	if m, ok := s.model.(*rateModel); ok && m.nbShape > 0 {
		fmt.Fprintf(bw, "# traffic: negative binomial hours of size %.2f, daily level of Gamma shape %g\n", m.nbShape, m.dayShape)
	}
	for _, in := range s.Incidents {
		yard := ""
		switch {
		case in.Yardstick != "" && in.YardAt.IsZero():
			yard = fmt.Sprintf("; the %s does not find it", in.Yardstick)
		case in.Yardstick != "":
			yard = fmt.Sprintf("; the %s alarms at %s", in.Yardstick, in.YardAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(bw, "# incident %q: %s to %s (detectable: %v, p = %.3g%s)\n", in.Spec.Name,
			in.Start.UTC().Format(time.RFC3339), in.End.UTC().Format(time.RFC3339), in.Detectable, in.PValue, yard)
	}
	for _, x := range s.Excused {
		fmt.Fprintf(bw, "# excused %q: %s to %s\n", x.Name, x.From.UTC().Format(time.RFC3339), x.To.UTC().Format(time.RFC3339))
	}
	for _, e := range s.Events {
		fmt.Fprintf(bw, "%s,%d\n", e.T.UTC().Format(time.RFC3339Nano), e.Count)
	}
	return bw.Flush()
}
