package detectjudge

import (
	"math"
	"sort"
	"time"
)

// A DetectionSummary aggregates incident outcomes.
type DetectionSummary struct {
	N, Detected int
	// Detectable incidents (see OracleAlpha) and how many of them were found.
	Detectable, DetectableFound int
	Median, P95                 time.Duration // over detected incidents only; zero when none
}

// Share is the fraction of incidents detected.
func (s DetectionSummary) Share() float64 { return ratio(s.Detected, s.N) }

// ShareDetectable is the fraction of incidents detectable in principle
// that were detected.
func (s DetectionSummary) ShareDetectable() float64 { return ratio(s.DetectableFound, s.Detectable) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
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
		if o.Detectable {
			s.Detectable++
		}
		if o.Detected {
			s.Detected++
			ttd = append(ttd, o.TTD)
			if o.Detectable {
				s.DetectableFound++
			}
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

// A StreamSummary aggregates stream outcomes: false alarms and arming.
type StreamSummary struct {
	Streams     int
	Days        float64
	FalseAlarms int
	Noisy       int // streams with at least one false alarm
	// Days from the first event to arming: median and largest over the
	// streams that armed; Never did not arm at all, Late not within the bound.
	ArmMedian, ArmMax time.Duration
	Never, Late       int
}

// Per1000 is false alarms per 1000 beet-days.
func (s StreamSummary) Per1000() float64 {
	if s.Days == 0 {
		return 0
	}
	return 1000 * float64(s.FalseAlarms) / s.Days
}

// SummariseStreams aggregates the stream outcomes that keep returns true for.
func SummariseStreams(outs []StreamOutcome, keep func(StreamOutcome) bool) StreamSummary {
	var s StreamSummary
	var arm []time.Duration
	for _, o := range outs {
		if !keep(o) {
			continue
		}
		s.Streams++
		s.Days += o.Days
		s.FalseAlarms += o.FalseAlarms
		if o.FalseAlarms > 0 {
			s.Noisy++
		}
		if o.ArmedAfter < 0 {
			s.Never++
		} else {
			arm = append(arm, o.ArmedAfter)
		}
		if o.ArmedLate {
			s.Late++
		}
	}
	s.ArmMedian = Percentile(arm, 50)
	s.ArmMax = Percentile(arm, 100)
	return s
}
