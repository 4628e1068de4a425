package detectjudge

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// NAB timestamps carry no zone; they are read as UTC.
const (
	nabRowLayout    = "2006-01-02 15:04:05"
	nabWindowLayout = "2006-01-02 15:04:05.000000"
)

// A NABSeries is one NAB data file: one row per bucket that exists in the
// file (a missing bucket is missing, not a zero), and its labelled windows.
type NABSeries struct {
	Name    string      // path relative to data/, as in the label files
	Times   []time.Time // bucket timestamps, UTC, strictly increasing
	Values  []int       // events in each bucket
	Windows []RowWindow // labelled windows as row ranges
	Limits  [][2]time.Time
	Bucket  time.Duration // the usual spacing of rows
}

// LoadNAB reads labels/combined_windows.json and every data file it names
// from dir (the layout of shared/data/nab), sorted by name.
func LoadNAB(dir string) ([]NABSeries, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "labels", "combined_windows.json"))
	if err != nil {
		return nil, fmt.Errorf("nab: read windows: %w", err)
	}
	var windows map[string][][2]string
	if err := json.Unmarshal(raw, &windows); err != nil {
		return nil, fmt.Errorf("nab: parse windows: %w", err)
	}
	names := make([]string, 0, len(windows))
	for n := range windows {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []NABSeries
	for _, n := range names {
		s, err := loadNABFile(filepath.Join(dir, "data", filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		s.Name = n
		for _, lim := range windows[n] {
			t1, err1 := time.Parse(nabWindowLayout, lim[0])
			t2, err2 := time.Parse(nabWindowLayout, lim[1])
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("nab: %s: window %v: %w", n, lim, err)
			}
			w, err := rowWindow(s.Times, t1, t2)
			if err != nil {
				return nil, fmt.Errorf("nab: %s: %w", n, err)
			}
			s.Windows = append(s.Windows, w)
			s.Limits = append(s.Limits, [2]time.Time{t1, t2})
		}
		out = append(out, s)
	}
	return out, nil
}

// rowWindow maps a window's time limits to the rows inside them. NAB's
// sweeper finds the rows by exact timestamp, so limits that are not row
// times are reported rather than silently widened.
func rowWindow(times []time.Time, t1, t2 time.Time) (RowWindow, error) {
	first := sort.Search(len(times), func(i int) bool { return !times[i].Before(t1) })
	last := sort.Search(len(times), func(i int) bool { return times[i].After(t2) }) - 1
	if first >= len(times) || last < first || !times[first].Equal(t1) || !times[last].Equal(t2) {
		return RowWindow{}, fmt.Errorf("window %s..%s does not start and end on rows", t1, t2)
	}
	return RowWindow{First: first, Last: last}, nil
}

func loadNABFile(path string) (NABSeries, error) {
	f, err := os.Open(path)
	if err != nil {
		return NABSeries{}, fmt.Errorf("nab: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 2
	var s NABSeries
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, fmt.Errorf("nab: %s: %w", path, err)
		}
		if line == 1 && rec[0] == "timestamp" {
			continue
		}
		t, err := time.Parse(nabRowLayout, rec[0])
		if err != nil {
			return s, fmt.Errorf("nab: %s:%d: %w", path, line, err)
		}
		v, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return s, fmt.Errorf("nab: %s:%d: bad count %q", path, line, rec[1])
		}
		if n := len(s.Times); n > 0 && !t.After(s.Times[n-1]) {
			return s, fmt.Errorf("nab: %s:%d: timestamp %s not after the previous row", path, line, rec[0])
		}
		s.Times = append(s.Times, t)
		s.Values = append(s.Values, int(math.Round(v)))
	}
	if len(s.Times) < 2 {
		return s, fmt.Errorf("nab: %s: fewer than two rows", path)
	}
	gaps := make([]time.Duration, len(s.Times)-1)
	for i := range gaps {
		gaps[i] = s.Times[i+1].Sub(s.Times[i])
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	s.Bucket = gaps[len(gaps)/2]
	return s, nil
}

// NABFileResult is one series replayed through a detector and scored.
type NABFileResult struct {
	Name     string
	Rows     int
	Describe string              // the detector's Describe(), if any
	Alarms   int                 // raised alarms (recoveries excluded)
	Scores   map[string]NABScore // by profile name
}

// ReplayNAB replays s through a detector from f, one bucket at a time: every
// row is Advance(bucket time), and a non-empty bucket is then
// Event(bucket time, count). The end of the replay is one bucket after the
// last row, so deadlines inside the last bucket still fire.
//
// It returns the row flags NAB scores: a raised alarm dated At flags the row
// whose bucket holds At (the last row at or before At), and several alarms
// on one row are one detection, as NAB scores rows, not alarms.
func ReplayNAB(s NABSeries, f Factory) (detected []bool, d Detector, raised int, err error) {
	d = f(nabInfo(s))
	alarms, err := Replay(skipZero{d}, nabRows(s), s.Times[len(s.Times)-1].Add(s.Bucket))
	if err != nil {
		return nil, d, 0, fmt.Errorf("nab: %s: %w", s.Name, err)
	}
	detected = make([]bool, len(s.Times))
	for _, at := range Raised(alarms) {
		row := sort.Search(len(s.Times), func(i int) bool { return s.Times[i].After(at) }) - 1
		if row < 0 {
			row = 0
		}
		detected[row] = true
		raised++
	}
	return detected, d, raised, nil
}

// nabInfo is what a detector is told of a NAB series: its probation rows
// are its history.
func nabInfo(s NABSeries) StreamInfo {
	prob := ProbationLength(len(s.Times))
	info := StreamInfo{
		Name: s.Name, Family: "nab", Location: time.UTC,
		Start: s.Times[0], LearnEnd: s.Times[prob],
	}
	for i := 0; i < prob; i++ {
		if s.Values[i] > 0 {
			info.History = append(info.History, Event{T: s.Times[i], Count: s.Values[i]})
		}
	}
	return info
}

// nabRows is every row of s as an event. Every row goes through Replay;
// skipZero turns an empty bucket into a bare Advance, so deadline
// detectors are polled at every bucket.
func nabRows(s NABSeries) []Event {
	rows := make([]Event, len(s.Times))
	for i, t := range s.Times {
		rows[i] = Event{T: t, Count: s.Values[i]}
	}
	return rows
}

// skipZero forwards Event only for non-empty buckets, so a zero bucket is
// exactly one Advance.
type skipZero struct{ Detector }

func (z skipZero) Event(t time.Time, n int) []Alarm {
	if n == 0 {
		return nil
	}
	return z.Detector.Event(t, n)
}

// EvaluateNAB replays every series through detectors from f and scores them
// with each profile.
func EvaluateNAB(series []NABSeries, f Factory, profiles []Profile) ([]NABFileResult, error) {
	var out []NABFileResult
	for _, s := range series {
		det, d, raised, err := ReplayNAB(s, f)
		if err != nil {
			return nil, err
		}
		r := NABFileResult{Name: s.Name, Rows: len(s.Times), Alarms: raised, Scores: map[string]NABScore{}}
		if ds, ok := d.(Describer); ok {
			r.Describe = ds.Describe()
		}
		for _, p := range profiles {
			r.Scores[p.Name] = ScoreNAB(len(s.Times), s.Windows, det, p)
		}
		out = append(out, r)
	}
	return out, nil
}

// LoadProfiles reads NAB's profiles.json from dir, in NAB's order (standard,
// reward_low_FP_rate, reward_low_FN_rate), then any others by name.
func LoadProfiles(dir string) ([]Profile, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "profiles.json"))
	if err != nil {
		return nil, fmt.Errorf("nab: read profiles: %w", err)
	}
	var m map[string]struct {
		CostMatrix struct{ TpWeight, FnWeight, FpWeight float64 }
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("nab: parse profiles: %w", err)
	}
	rank := map[string]int{"standard": 0, "reward_low_FP_rate": 1, "reward_low_FN_rate": 2}
	var ps []Profile
	for n, p := range m {
		c := p.CostMatrix
		ps = append(ps, Profile{Name: n, TP: c.TpWeight, FN: c.FnWeight, FP: c.FpWeight})
	}
	sort.Slice(ps, func(i, j int) bool {
		ri, oki := rank[ps[i].Name]
		rj, okj := rank[ps[j].Name]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		return ps[i].Name < ps[j].Name
	})
	if len(ps) == 0 {
		return nil, errors.New("nab: profiles.json holds no profile")
	}
	return ps, nil
}
