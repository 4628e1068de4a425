package harness

import (
	"math"
	"sort"
	"time"
)

// A DetectionSummary aggregates incident outcomes.
type DetectionSummary struct {
	N, Detected int
	Median, P95 time.Duration // over detected incidents only; zero when none
}

// Share is the fraction of incidents detected.
func (s DetectionSummary) Share() float64 {
	if s.N == 0 {
		return 0
	}
	return float64(s.Detected) / float64(s.N)
}

// SummariseIncidents aggregates the outcomes that keep returns true for.
func SummariseIncidents(outs []IncidentOutcome, keep func(IncidentOutcome) bool) DetectionSummary {
	var s DetectionSummary
	var ttd []time.Duration
	for _, o := range outs {
		if !keep(o) {
			continue
		}
		s.N++
		if o.Detected {
			s.Detected++
			ttd = append(ttd, o.TTD)
		}
	}
	s.Median = Percentile(ttd, 50)
	s.P95 = Percentile(ttd, 95)
	return s
}

// Percentile returns the nearest-rank p-th percentile of ds (the smallest
// value with at least p% of the values at or below it), zero for no values.
// Nearest rank keeps it an observed time to detect, not an interpolation.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

// A FalseAlarmSummary aggregates clean-stream outcomes.
type FalseAlarmSummary struct {
	Beets  int
	Days   float64
	Alarms int
	Noisy  int // beets with at least one false alarm
}

// Per1000 is false alarms per 1000 beet-days.
func (s FalseAlarmSummary) Per1000() float64 {
	if s.Days == 0 {
		return 0
	}
	return 1000 * float64(s.Alarms) / s.Days
}

// SummariseClean aggregates the clean outcomes of one family.
func SummariseClean(outs []CleanOutcome, family string) FalseAlarmSummary {
	var s FalseAlarmSummary
	for _, o := range outs {
		if o.Family != family {
			continue
		}
		s.Beets++
		s.Days += o.Days
		s.Alarms += o.Alarms
		if o.Alarms > 0 {
			s.Noisy++
		}
	}
	return s
}
