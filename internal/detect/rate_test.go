package detect

import (
	"math"
	"testing"
	"time"
)

// TestRateModelLearnsAndArms feeds 10 evenly spaced clusters an hour for
// 8 days: the model arms after a week and flags a silence once the
// expected clusters reach its threshold (ln(240 gaps a day / goal) ≈ 13.3
// clusters, about 80 min at 10 an hour).
func TestRateModelLearnsAndArms(t *testing.T) {
	m := NewRateModel(time.UTC)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var last time.Time
	for i := range 8 * 24 * 10 {
		last = start.Add(time.Duration(i) * 6 * time.Minute)
		m.Observe(last, 1)
		if i == 100 && m.Armed() {
			t.Fatal("armed after 10 hours")
		}
	}
	if !m.Armed() {
		t.Fatal("not armed after 8 days")
	}
	due, ok := m.SilenceDeadline()
	if !ok {
		t.Fatal("no silence deadline")
	}
	wait := due.Sub(last)
	want := time.Duration(math.Log(240/falseAlarmsGoal) / 10 * float64(time.Hour))
	if wait < want*8/10 || wait > want*12/10 {
		t.Fatalf("silence flagged after %v, want about %v", wait, want)
	}
	if e := m.Expected(last, due); math.Abs(e-math.Log(240/falseAlarmsGoal)) > 1 {
		t.Fatalf("expected clusters at the deadline %.1f", e)
	}
}

// TestRateModelQuietNights: a beet busy by day and silent at night does
// not count night hours toward a silence.
func TestRateModelQuietNights(t *testing.T) {
	m := NewRateModel(time.UTC)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var last time.Time
	for day := range 14 {
		for minute := 9 * 60; minute < 17*60; minute += 5 {
			last = start.AddDate(0, 0, day).Add(time.Duration(minute) * time.Minute)
			m.Observe(last, 1)
		}
	}
	due, ok := m.SilenceDeadline()
	if !ok || due.Hour() < 9 || due.Hour() > 12 || due.Sub(last) < 14*time.Hour {
		t.Fatalf("deadline %v after a last event at %v: want the next morning, not the night", due, last)
	}
}

func TestRateModelRoundTrip(t *testing.T) {
	m := NewRateModel(time.UTC)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 500 {
		m.Observe(start.Add(time.Duration(i)*7*time.Minute), 1+i%3)
	}
	m.Freeze()
	b, _ := m.MarshalBinary()
	if len(b) != encodedModelLen {
		t.Fatalf("encoded %d bytes, want %d", len(b), encodedModelLen)
	}
	got, err := LoadRateModel(b, time.UTC)
	if err != nil || *got != *m {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, m)
	}
	if _, err := LoadRateModel(b[:10], time.UTC); err == nil {
		t.Fatal("a cut model loaded")
	}
	if m, err := LoadRateModel(nil, time.UTC); err != nil || m.clusters != 0 {
		t.Fatal("an empty model is not a new one")
	}
}
