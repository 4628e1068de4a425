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
	Alarms                      int           // raised in the found incidents' windows (IncidentOutcome.Alarms)
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
			s.Alarms += o.Alarms
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
	FalseKinds  map[string]int
	Noisy       int // streams with at least one false alarm
	// Days from the first event to arming: median and largest over the
	// streams that armed; Never did not arm at all, Late not within the bound.
	ArmMedian, ArmMax time.Duration
	Never, Late       int
	// The part before arming: beet-days and the false alarms raised there.
	LearningDays  float64
	LearningFalse int
}

// LearningPer1000 is false alarms while learning per 1000 learning beet-days.
func (s StreamSummary) LearningPer1000() float64 {
	if s.LearningDays == 0 {
		return 0
	}
	return 1000 * float64(s.LearningFalse) / s.LearningDays
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
		s.FalseAlarms += len(o.False)
		s.LearningDays += o.LearningDays
		s.LearningFalse += o.LearningFalse
		for _, a := range o.False {
			if s.FalseKinds == nil {
				s.FalseKinds = map[string]int{}
			}
			s.FalseKinds[a.Kind]++
		}
		if len(o.False) > 0 {
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

// A YardSummary compares a detector with a yardstick (yardstick.go) over
// the incidents measured against it.
type YardSummary struct {
	N         int // incidents measured against the yardstick
	YardFound int // found by the yardstick
	BothFound int // of those, found by the detector too
	// Ratios of the detector's time to detect over the yardstick's, over
	// the incidents both found (the yardstick's at least a minute: Ratio).
	MedianRatio, P90Ratio float64
	// Median times to detect over the incidents both found.
	Median, YardMedian time.Duration
}

// Share is the fraction of what the yardstick found that the detector found.
func (s YardSummary) Share() float64 { return ratio(s.BothFound, s.YardFound) }

// Ratio is the detector's time to detect over the yardstick's, with the
// yardstick's taken as at least GraceSlack: the judge's resolution for a
// missed run (flagged within its grace plus a minute is on time), so that
// a start ping due within seconds does not turn a prompt alarm into a
// ratio of hundreds.
func (o IncidentOutcome) Ratio() float64 {
	return o.TTD.Seconds() / max(o.YardTTD, GraceSlack).Seconds()
}

// SummariseYard aggregates the outcomes measured against yardstick that
// keep returns true for.
func SummariseYard(outs []IncidentOutcome, yardstick string, keep func(IncidentOutcome) bool) YardSummary {
	var s YardSummary
	var ratios []float64
	var ttd, yard []time.Duration
	for _, o := range outs {
		if o.Yardstick != yardstick || !keep(o) {
			continue
		}
		s.N++
		if !o.YardFound {
			continue
		}
		s.YardFound++
		if o.Detected {
			s.BothFound++
			ratios = append(ratios, o.Ratio())
			ttd, yard = append(ttd, o.TTD), append(yard, o.YardTTD)
		}
	}
	s.MedianRatio, s.P90Ratio = percentileF(ratios, 50), percentileF(ratios, 90)
	s.Median, s.YardMedian = Percentile(ttd, 50), Percentile(yard, 50)
	return s
}

// percentileF is Percentile for float64 values (nearest rank), 0 for none.
func percentileF(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}
