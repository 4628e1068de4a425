package detect_test

import (
	"math"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

func TestExpectedBand(t *testing.T) {
	loc := time.UTC
	// Two events an hour, every hour, for two weeks: armed, about 2 an hour.
	m := detect.NewRateModel(loc)
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, loc)
	var last time.Time
	for h := range 14 * 24 {
		for _, min := range []int{10, 40} {
			last = start.Add(time.Duration(h)*time.Hour + time.Duration(min)*time.Minute)
			m.Observe(last, 1)
		}
	}
	model, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, Model: model}
	lo, mid, hi, ok := detect.ExpectedBand(b, last, time.Hour, 24)
	if !ok || len(mid) != 24 {
		t.Fatalf("ExpectedBand = ok %v, %d buckets", ok, len(mid))
	}
	for i := range mid {
		if math.Abs(mid[i]-2) > 0.5 || !(lo[i] < mid[i] && mid[i] < hi[i]) || lo[i] < 0 {
			t.Fatalf("bucket %d: lo %.2f mid %.2f hi %.2f, want about 2 inside a band", i, lo[i], mid[i], hi[i])
		}
	}
	// Half-hour buckets expect half as much.
	_, half, _, _ := detect.ExpectedBand(b, last, 30*time.Minute, 2)
	if math.Abs(half[0]-mid[0]/2) > 0.01 {
		t.Errorf("half-hour bucket expects %.2f, want %.2f", half[0], mid[0]/2)
	}

	for name, nb := range map[string]*beet.Beet{
		"period mode": {Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}, Model: model},
		"no model":    {Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}},
		"garbage":     {Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, Model: []byte("x")},
	} {
		if _, _, _, ok := detect.ExpectedBand(nb, last, time.Hour, 24); ok {
			t.Errorf("%s: a band", name)
		}
	}
	young := detect.NewRateModel(loc)
	young.Observe(start, 1)
	ym, _ := young.MarshalBinary()
	if _, _, _, ok := detect.ExpectedBand(&beet.Beet{Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, Model: ym}, start, time.Hour, 24); ok {
		t.Error("a learning model gives a band")
	}
}
