package detectjudge

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tuneParams is a parameter struct with a field of every kind Variants and
// SetFields move, one they leave alone, and an unexported one.
type tuneParams struct {
	Alarm float64
	Hours int
	Grace time.Duration
	Name  string
	small int
}

func TestVariants(t *testing.T) {
	def := tuneParams{Alarm: 14, Hours: 1, Grace: time.Minute, Name: "x", small: 3}
	vs := Variants(def, 0.5, 2)
	// Alarm ×0.5 and ×2, Hours ×2 only (×0.5 does not move an int 1),
	// Grace ×0.5 and ×2; Name and the unexported field never.
	if len(vs) != 1+2+1+2 || vs[0] != def {
		t.Fatalf("%d variants: %+v", len(vs), vs)
	}
	names := map[string]bool{}
	for _, v := range vs {
		names[VariantName(def, v)] = true
	}
	for _, want := range []string{"defaults", "Alarm 14 → 7", "Alarm 14 → 28", "Hours 1 → 2", "Grace 1m0s → 30s", "Grace 1m0s → 2m0s"} {
		if !names[want] {
			t.Errorf("no variant %q in %v", want, names)
		}
	}
}

func TestSetFields(t *testing.T) {
	def := tuneParams{Alarm: 14, Hours: 1, Grace: time.Minute, Name: "x", small: 3}
	v, err := SetFields(def, " Alarm=7.5, Grace=90s,Hours=4")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.(tuneParams), (tuneParams{Alarm: 7.5, Hours: 4, Grace: 90 * time.Second, Name: "x", small: 3}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if name := VariantName(def, v); name != "Alarm 14 → 7.5, Hours 1 → 4, Grace 1m0s → 1m30s" {
		t.Errorf("named %q", name)
	}
	if v, err := SetFields(def, ""); err != nil || v.(tuneParams) != def {
		t.Errorf("an empty list: %+v, %v", v, err)
	}
	for list, want := range map[string]string{
		"Bogus=1":         `no parameter "Bogus" (have Alarm, Hours, Grace)`,
		"Name=y":          `no parameter "Name"`,
		"small=1":         `no parameter "small"`,
		"Alarm":           `"Alarm": want Name=value`,
		"Alarm=":          `want Name=value`,
		"Alarm=x":         `Alarm: "x" is no number`,
		"Alarm=NaN":       `Alarm: "NaN" is no number`,
		"Alarm=+Inf":      `is no number`,
		"Hours=1.5":       `Hours: "1.5" is no whole number`,
		"Grace=10":        `Grace: "10" is no duration`,
		"Alarm=1,Alarm=2": `Alarm is set twice`,
	} {
		if _, err := SetFields(def, list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", list, err, want)
		}
	}
}

// rowAlarms is a detector that raises an alarm at the given rows' times.
type rowAlarms struct{ at map[time.Time]bool }

func (d rowAlarms) Event(t time.Time, _ int) []Alarm {
	if d.at[t] {
		return []Alarm{{At: t, Kind: KindSurge}}
	}
	return nil
}

func (rowAlarms) Advance(time.Time) []Alarm { return nil }

// threeFilesTwoTunings is three flat files with a window at row 40 (a, b)
// or 70 (c), and tunings that alarm at row 40 ("early"), at row 70 ("late")
// or never ("defaults").
func threeFilesTwoTunings() ([]NABSeries, []Tuning) {
	mk := func(name string, win int) NABSeries {
		s := NABSeries{Name: name, Bucket: time.Minute}
		for i := 0; i < 100; i++ {
			s.Times = append(s.Times, at("00:00").Add(time.Duration(i)*time.Minute))
			s.Values = append(s.Values, 1)
		}
		s.Windows = []RowWindow{{First: win, Last: win + 9}}
		return s
	}
	alarmAtRow := func(row int) Factory {
		return func(info StreamInfo) Detector {
			return rowAlarms{at: map[time.Time]bool{info.Start.Add(time.Duration(row) * time.Minute): true}}
		}
	}
	return []NABSeries{mk("a", 40), mk("b", 40), mk("c", 70)},
		[]Tuning{{Name: "defaults", Factory: NewNever}, {Name: "early", Factory: alarmAtRow(40)}, {Name: "late", Factory: alarmAtRow(70)}}
}

// TestLeaveOneOut builds three files where tuning "early" is best on two
// and wrong on the third: it wins in sample, and held out it costs the
// third file.
func TestLeaveOneOut(t *testing.T) {
	series, tunings := threeFilesTwoTunings()
	res, err := LeaveOneOut(series, tunings, StandardProfile, 2, LOFORules{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Dev.Normalised() != 0 || res.BestName != "early" {
		t.Errorf("dev %.1f, best %q", res.Dev.Normalised(), res.BestName)
	}
	chosen := map[string]string{}
	for _, f := range res.Files {
		chosen[f.Name] = f.Chosen
	}
	// Held out c, early wins on {a, b} and scores c badly: the overfitting
	// that leave-one-out is there to show.
	if chosen["c"] != "early" {
		t.Errorf("chosen %v", chosen)
	}
	if !(res.LOFO.Normalised() < res.InSample.Normalised()) {
		t.Errorf("leave-one-out %.1f not below in-sample %.1f", res.LOFO.Normalised(), res.InSample.Normalised())
	}
	if _, err := LeaveOneOut(series, nil, StandardProfile, 1, LOFORules{}); err == nil {
		t.Error("no tunings accepted")
	}
}

// TestLeaveOneOutRules: the rules keep the choice on five files from
// overfitting. Held out c, "early" wins on {a, b}, hurts neither, and is
// chosen unless the synthetic screen rejects it; held out a (or b), each
// tuning that gains on one of the other two costs the other a false
// positive, more than MaxFileDrop, and the defaults stay. The synthetic
// screen runs only for a tuning that passed the NAB rules, once.
func TestLeaveOneOutRules(t *testing.T) {
	series, tunings := threeFilesTwoTunings()
	chosen := func(rules LOFORules) (map[string]string, LOFOResult) {
		res, err := LeaveOneOut(series, tunings, StandardProfile, 2, rules)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range res.Files {
			m[f.Name] = f.Chosen
		}
		return m, res
	}
	got, _ := chosen(DefaultLOFORules)
	if want := map[string]string{"a": "defaults", "b": "defaults", "c": "early"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NAB rules only: chosen %v, want %v", got, want)
	}
	calls := 0
	rules := DefaultLOFORules
	rules.Synthetic = func(tu int) (bool, string) {
		calls++
		if tunings[tu].Name != "early" {
			t.Errorf("synthetic screen ran for %q, which failed the NAB rules", tunings[tu].Name)
		}
		return false, "too many false alarms"
	}
	got, res := chosen(rules)
	if want := map[string]string{"a": "defaults", "b": "defaults", "c": "defaults"}; !reflect.DeepEqual(got, want) || calls != 1 {
		t.Errorf("with the synthetic screen: chosen %v (want %v), screen ran %d times (want 1)", got, want, calls)
	}
	if res.LOFO.Normalised() != res.Dev.Normalised() {
		t.Errorf("leave-one-out %.1f, dev %.1f: the defaults everywhere should score the dev score", res.LOFO.Normalised(), res.Dev.Normalised())
	}
}

// TestKeepsSyntheticGoals: a tuning passes the screen only within the
// false-alarm goals, overall and per family; a family the defaults already
// have over its goal may stay there, not get worse.
func TestKeepsSyntheticGoals(t *testing.T) {
	// Each family: 1000 beet-days with fa false alarms (fa per 1000).
	results := func(fa ...int) *Results {
		r := &Results{}
		for i, n := range fa {
			r.Streams = append(r.Streams, StreamOutcome{Family: fmt.Sprintf("f%d", i), Days: 1000, False: make([]Alarm, n)})
		}
		return r
	}
	for _, c := range []struct {
		name       string
		res, base  *Results
		ok         bool
		whyContain string
	}{
		{"within goals", results(0, 1, 0, 0), results(0, 0, 0, 0), true, ""},
		{"one family over", results(2, 0, 0, 0, 0, 0), results(0, 0, 0, 0, 0, 0), false, "f0 2.00"},
		{"over where the defaults are, no worse", results(2, 0, 0, 0, 0, 0), results(2, 0, 0, 0, 0, 0), true, ""},
		{"over where the defaults are, worse", results(3, 0, 0, 0, 0, 0), results(2, 0, 0, 0, 0, 0), false, "f0 3.00"},
		{"overall over", results(1, 1, 1, 1), nil, false, "overall"},
	} {
		ok, why := KeepsSyntheticGoals(c.res, c.base)
		if ok != c.ok || !strings.Contains(why, c.whyContain) {
			t.Errorf("%s: %v %q, want %v and %q", c.name, ok, why, c.ok, c.whyContain)
		}
	}
}

// TestAutoTuningsAreValid: the leave-one-out chooses only among parameter
// sets that mean something; a surge decay above 1 would make evidence grow.
func TestAutoTuningsAreValid(t *testing.T) {
	for _, tu := range AutoTunings() {
		if strings.HasPrefix(tu.Name, "SurgeDecay") && !strings.Contains(tu.Name, "→ 0.") {
			t.Errorf("tuning %q keeps more than the whole surge value an hour", tu.Name)
		}
	}
}
