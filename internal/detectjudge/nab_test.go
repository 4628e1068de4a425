package detectjudge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script is a test detector: it raises the alarms listed for each call time
// and records the calls it saw.
type script struct {
	onEvent, onAdvance map[time.Time][]Alarm
	calls              []string
}

func (s *script) Event(t time.Time, n int) []Alarm {
	s.calls = append(s.calls, "E"+t.Format("15:04")+"x"+string(rune('0'+n)))
	return s.onEvent[t]
}

func (s *script) Advance(t time.Time) []Alarm {
	s.calls = append(s.calls, "A"+t.Format("15:04"))
	return s.onAdvance[t]
}

func at(hm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-01-05 "+hm)
	if err != nil {
		panic(err)
	}
	return t
}

func TestReplayDrivesLikeTheSweeper(t *testing.T) {
	d := &script{onAdvance: map[time.Time][]Alarm{at("11:00"): {{At: at("10:30"), Kind: KindSilence}}}}
	evs := []Event{{T: at("10:00"), Count: 1}, {T: at("11:00"), Count: 2}}
	alarms, err := Replay(d, evs, at("12:00"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(d.calls, " "), "A10:00 E10:00x1 A11:00 E11:00x2 A12:00"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if len(alarms) != 1 || !alarms[0].At.Equal(at("10:30")) {
		t.Errorf("alarms %v", alarms)
	}
}

func TestReplayRejectsMisdatedAlarms(t *testing.T) {
	evs := []Event{{T: at("10:00"), Count: 1}, {T: at("11:00"), Count: 1}}
	// Dated before the previous call: a deadline reported late.
	late := &script{onEvent: map[time.Time][]Alarm{at("11:00"): {{At: at("10:30"), Kind: KindSilence}}}}
	if _, err := Replay(late, evs, at("12:00")); err == nil {
		t.Error("an alarm dated before the previous call was accepted")
	}
	// Dated after the call: seeing the future.
	future := &script{onAdvance: map[time.Time][]Alarm{at("10:00"): {{At: at("10:05"), Kind: KindSilence}}}}
	if _, err := Replay(future, evs, at("12:00")); err == nil {
		t.Error("an alarm dated in the future was accepted")
	}
}

// nabTestDir finds the shared NAB data from this package's directory.
func nabTestDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "shared", "data", "nab")
	if _, err := os.Stat(filepath.Join(dir, "labels", "combined_windows.json")); err != nil {
		t.Skipf("NAB data not found at %s", dir)
	}
	return dir
}

func TestLoadNAB(t *testing.T) {
	series, err := LoadNAB(nabTestDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	windows := 0
	for _, s := range series {
		rows[s.Name] = len(s.Times)
		windows += len(s.Windows)
		for i, w := range s.Windows {
			if !s.Times[w.First].Equal(s.Limits[i][0]) || !s.Times[w.Last].Equal(s.Limits[i][1]) {
				t.Errorf("%s: window %d rows do not match its limits", s.Name, i)
			}
		}
	}
	if len(series) != 6 || windows != 19 {
		t.Errorf("%d series with %d windows, want 6 and 19", len(series), windows)
	}
	// Row counts from the README; the ELB file has eight missing buckets
	// (4,032 rows over 14 days of 5-minute buckets), kept missing.
	if rows["realKnownCause/nyc_taxi.csv"] != 10320 || rows["realAWSCloudwatch/elb_request_count_8c0756.csv"] != 4032 {
		t.Errorf("rows %v", rows)
	}
	for _, s := range series {
		if s.Name == "realAWSCloudwatch/elb_request_count_8c0756.csv" {
			span := s.Times[len(s.Times)-1].Sub(s.Times[0])
			if buckets := int(span/(5*time.Minute)) + 1; buckets-len(s.Times) != 8 {
				t.Errorf("ELB: %d buckets spanned, %d rows: want 8 missing", buckets, len(s.Times))
			}
		}
	}
	ps, err := LoadProfiles(nabTestDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || ps[0] != StandardProfile || ps[2].FN != 2 || ps[1].FP != 0.22 {
		t.Errorf("profiles %+v", ps)
	}
}

// TestReplayNABMapsAlarmsToRows checks that an alarm flags the row whose
// bucket holds it and that the first scored row is where probation ends.
func TestReplayNABMapsAlarmsToRows(t *testing.T) {
	base := at("00:00")
	s := NABSeries{Name: "x", Bucket: 5 * time.Minute}
	for i := 0; i < 40; i++ {
		s.Times = append(s.Times, base.Add(time.Duration(i)*5*time.Minute))
		s.Values = append(s.Values, i%3) // zeros become bare Advance calls
	}
	d := &script{onAdvance: map[time.Time][]Alarm{
		s.Times[10]: {{At: s.Times[9].Add(2 * time.Minute), Kind: KindSilence}}, // inside bucket 9
		s.Times[20]: {{At: s.Times[20], Kind: KindDrop}, {At: s.Times[20], Kind: KindDrop, Recovery: true}},
	}}
	det, _, raised, err := ReplayNAB(s, func(info StreamInfo) Detector {
		if !info.LearnEnd.Equal(s.Times[ProbationLength(40)]) || len(info.History) == 0 {
			t.Errorf("info %+v", info)
		}
		return d
	})
	if err != nil {
		t.Fatal(err)
	}
	if raised != 2 || !det[9] || !det[20] || det[10] {
		t.Errorf("raised %d, flags 9:%v 10:%v 20:%v", raised, det[9], det[10], det[20])
	}
	for _, c := range d.calls {
		if strings.HasSuffix(c, "x0") {
			t.Errorf("Event called with a zero count: %s", c)
		}
	}
}
