package detectjudge

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"time"
)

// Variants returns def followed by one copy of it per numeric field and
// factor, with that field multiplied by the factor (float64, integer and
// time.Duration fields; others are left alone): a one-at-a-time grid around
// the defaults for a tuner. def must be a struct value.
func Variants(def any, factors ...float64) []any {
	v := reflect.ValueOf(def)
	if v.Kind() != reflect.Struct {
		panic("detectjudge: Variants needs a struct")
	}
	out := []any{def}
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		for _, f := range factors {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			fv := c.Field(i)
			switch fv.Kind() {
			case reflect.Float32, reflect.Float64:
				fv.SetFloat(fv.Float() * f)
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				n := int64(math.Round(float64(fv.Int()) * f))
				if n == fv.Int() {
					continue // an integer too small to move
				}
				fv.SetInt(n)
			default:
				continue
			}
			out = append(out, c.Interface())
		}
	}
	return out
}

// VariantName names a variant from Variants by the fields where it differs
// from the defaults, e.g. "SurgeAlarm 14 → 28"; the first is "defaults".
func VariantName(def, v any) string {
	a, b := reflect.ValueOf(def), reflect.ValueOf(v)
	name := ""
	for i := 0; i < a.NumField(); i++ {
		if !a.Type().Field(i).IsExported() {
			continue
		}
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if x != y {
			if d, ok := x.(time.Duration); ok {
				x, y = d.String(), y.(time.Duration).String()
			}
			name += fmt.Sprintf("%s %v → %v", a.Type().Field(i).Name, x, y)
		}
	}
	if name == "" {
		return "defaults"
	}
	return name
}

// A LOFOFile is one NAB file scored by parameters tuned on the other five.
type LOFOFile struct {
	Name    string
	Chosen  string   // the tuning chosen on the other files
	Score   NABScore // this file's score with it
	Default NABScore // this file's score with the defaults (the dev score's part)
}

// A LOFOResult is the leave-one-file-out evaluation on NAB.
type LOFOResult struct {
	Profile  Profile
	Tunings  int
	Files    []LOFOFile
	Dev      NABScore // every file with the defaults: the dev-set score
	InSample NABScore // every file with the one tuning best on all of them
	BestName string   // that tuning
	LOFO     NABScore // every file with the tuning chosen without it
}

// LeaveOneOut scores NAB the way overfitting shows: for each file, the
// tuning with the best corpus score on the other files (the earliest in
// tunings on a tie, so the defaults win ties) scores the held-out file; the
// held-out scores are summed and normalised as NAB sums a corpus. It also
// returns the dev score (defaults, tunings[0]) and the in-sample best.
// Replays run in parallel on workers goroutines (0: GOMAXPROCS).
func LeaveOneOut(series []NABSeries, tunings []Tuning, p Profile, workers int) (LOFOResult, error) {
	res := LOFOResult{Profile: p, Tunings: len(tunings)}
	if len(tunings) == 0 {
		return res, fmt.Errorf("lofo: no tunings")
	}
	// scores[t][f]: tuning t on file f.
	scores := make([][]NABScore, len(tunings))
	for t := range scores {
		scores[t] = make([]NABScore, len(series))
	}
	type cell struct{ t, f int }
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan cell)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				s := series[c.f]
				det, _, _, err := ReplayNAB(s, tunings[c.t].Factory)
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					continue
				}
				scores[c.t][c.f] = ScoreNAB(len(s.Times), s.Windows, det, p)
			}
		}()
	}
	for t := range tunings {
		for f := range series {
			next <- cell{t, f}
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return res, first
	}
	corpus := func(t, skip int) NABScore {
		var sum NABScore
		for f := range series {
			if f != skip {
				sum = sum.Add(scores[t][f])
			}
		}
		return sum
	}
	best := func(skip int) int {
		b := 0
		for t := 1; t < len(tunings); t++ {
			if corpus(t, skip).Normalised() > corpus(b, skip).Normalised() {
				b = t
			}
		}
		return b
	}
	res.Dev = corpus(0, -1)
	b := best(-1)
	res.InSample, res.BestName = corpus(b, -1), tunings[b].Name
	for f, s := range series {
		t := best(f)
		res.Files = append(res.Files, LOFOFile{Name: s.Name, Chosen: tunings[t].Name, Score: scores[t][f], Default: scores[0][f]})
		res.LOFO = res.LOFO.Add(scores[t][f])
	}
	sort.SliceStable(res.Files, func(i, j int) bool { return res.Files[i].Name < res.Files[j].Name })
	return res, nil
}
