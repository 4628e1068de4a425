package detectjudge

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

// TestLearnedRatesCUSUM is an analysis, not a check: how much of what the
// drop and surge yardstick finds a CUSUM can find that knows what the
// yardstick knows (the change's factor, a source's dispersion and the
// spread of its days) but, like Beet, not the rates: it reads each hour at
// the mean of its kind (weekday or weekend, hour of day) over the stream
// before the change. Its false alarms are counted on clean streams (rates
// from their first 14 days; a drop of factor 0.3 and a surge of 4 looked
// for in each day after), at the yardstick's threshold and 1 and 2 nats
// above it, and beside them those of the yardstick itself. Run with
//
//	BEET_JUDGE_LEARNED_FAMILIES=poisson-2,negbin-50 go test -run TestLearnedRatesCUSUM -v ./internal/detectjudge
func TestLearnedRatesCUSUM(t *testing.T) {
	fams := os.Getenv("BEET_JUDGE_LEARNED_FAMILIES")
	if fams == "" {
		t.Skip("an analysis: set BEET_JUDGE_LEARNED_FAMILIES to run it")
	}
	streams := 36
	families, unknown := FilterFamilies(Families(), fams)
	if len(unknown) > 0 {
		t.Fatalf("no families %v", unknown)
	}
	for _, f := range families {
		for _, above := range []float64{0, 1, 2} {
			var found, yard, falses, knownFalses int
			var cleanDays float64
			for _, seed := range []uint64{1, 100, 101} {
				for _, spec := range f.Incidents {
					if spec.Kind != IncidentDrop && spec.Kind != IncidentSurge {
						continue
					}
					for i := range streams {
						s, err := f.IncidentStream(seed, spec, i)
						if err != nil {
							continue
						}
						m := rateModelOf(t, s)
						inc := s.Incidents[0]
						if inc.YardAt.IsZero() {
							continue
						}
						yard++
						m.learned = learnedRates(m.arr, s.Traffic, s.Info.Start, inc.Start)
						if !changeAlarm(m, s, inc, above).IsZero() {
							found++
						}
					}
				}
				for i := range streams {
					s, err := f.CleanStream(seed, i)
					if err != nil {
						continue
					}
					m := rateModelOf(t, s)
					from := s.Info.Start.AddDate(0, 0, 14)
					learned := learnedRates(m.arr, s.Traffic, s.Info.Start, from)
					for day := from; day.Add(24 * time.Hour).Before(s.End); day = day.Add(24 * time.Hour) {
						for _, factor := range []float64{0.3, 4} {
							inc := Incident{Start: day, End: day.Add(24*time.Hour - DetectTolerance), Factor: factor}
							m.learned = learned
							if !changeAlarm(m, s, inc, above).IsZero() {
								falses++
							}
							m.learned = nil
							if !changeAlarm(m, s, inc, above).IsZero() {
								knownFalses++
							}
						}
						cleanDays++
					}
				}
			}
			fmt.Printf("%s, threshold +%.0f nats: finds %d of the %d drops and surges the yardstick finds (%.0f%%); %d false alarms in %.0f clean beet-days (%.2f per 1000; the yardstick at this threshold %d)\n",
				f.Name, above, found, yard, 100*float64(found)/float64(max(yard, 1)), falses, cleanDays, 1000*float64(falses)/cleanDays, knownFalses)
		}
	}
}

// changeAlarm is when the drop and surge yardstick, its threshold above
// nats higher, flags inc on s (zero: not in [Start, End+DetectTolerance]).
func changeAlarm(m *rateModel, s Stream, inc Incident, above float64) time.Time {
	if m.nbShape > 0 {
		return m.mixtureCUSUMAlarm(s.Traffic, s.Info.Start, &inc, alphaPerArrival(24)*math.Exp(-above))
	}
	return m.cusumAlarm(s.Traffic, s.Info.Start, &inc, alphaPerArrival(m.perHour*24)*math.Exp(-above))
}

func rateModelOf(t *testing.T, s Stream) *rateModel {
	m, ok := s.model.(*rateModel)
	if !ok {
		t.Fatalf("%s: not a rate stream", s.Info.Name)
	}
	return m
}

// learnedRates is the mean arrivals an hour of each kind (weekday or
// weekend, hour of day, in loc) over [from, to).
func learnedRates(arr []int64, loc *time.Location, from, to time.Time) func(time.Time) float64 {
	var n, hours [48]float64
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		hours[hourKind(h, loc)]++
	}
	for _, a := range arr {
		if t := time.Unix(0, a); !t.Before(from) && t.Before(to) {
			n[hourKind(t, loc)]++
		}
	}
	return func(t time.Time) float64 {
		k := hourKind(t, loc)
		return max(n[k]/max(hours[k], 1), 1e-3)
	}
}

func hourKind(t time.Time, loc *time.Location) int {
	lt := t.In(loc)
	if isWeekend(lt.Weekday()) {
		return 24 + lt.Hour()
	}
	return lt.Hour()
}
