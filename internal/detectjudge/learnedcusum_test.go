package detectjudge

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestLearnedRatesCUSUM is an analysis, not a check: how much of what the
// drop and surge yardstick finds a CUSUM can find that knows the change's
// factor as the yardstick does but, like Beet, not the rates: it reads each
// hour at the mean of its kind (weekday or weekend, hour of day) over the
// stream before the change. Its false alarms are counted on clean streams
// (rates from their first 14 days, a drop CUSUM of factor 0.3 and a surge
// one of 4 over the rest), at the yardstick's threshold and 1 and 2 nats
// above it, and those of the same CUSUMs at the rates known. Poisson families only (the negative-binomial yardstick is a
// mixture over hidden levels). Run with
//
//	BEET_JUDGE_LEARNED_FAMILIES=poisson-2,poisson-20 go test -run TestLearnedRatesCUSUM -v ./internal/detectjudge
func TestLearnedRatesCUSUM(t *testing.T) {
	fams := os.Getenv("BEET_JUDGE_LEARNED_FAMILIES")
	if fams == "" {
		t.Skip("an analysis: set BEET_JUDGE_LEARNED_FAMILIES to run it")
	}
	for _, name := range strings.Split(fams, ",") {
		f := familyNamed(t, name)
		for _, above := range []float64{0, 1, 2} {
			var found, yard, falses, knownFalses int
			var cleanDays float64
			for _, seed := range []uint64{1, 100, 101} {
				for _, spec := range f.Incidents {
					if spec.Kind != IncidentDrop && spec.Kind != IncidentSurge {
						continue
					}
					for i := range 36 {
						s, err := f.IncidentStream(seed, spec, i)
						if err != nil {
							continue
						}
						m := poissonModel(t, s)
						inc := s.Incidents[0]
						c := cusum{h: -math.Log(alphaPerArrival(m.perHour*24)) + above, f: inc.Factor, from: inc.Start,
							rate: learnedRates(m.arr, s.Traffic, s.Info.Start, inc.Start)}
						at := firstAlarm(&c, m.arr, maxTime(s.Info.Start, inc.Start.Add(-24*time.Hour)), inc.End.Add(DetectTolerance))
						if !inc.YardAt.IsZero() {
							yard++
							if !at.IsZero() {
								found++
							}
						}
					}
				}
				for i := range 36 {
					s, err := f.CleanStream(seed, i)
					if err != nil {
						continue
					}
					m := poissonModel(t, s)
					from := s.Info.Start.AddDate(0, 0, 14)
					for _, factor := range []float64{0.3, 4} {
						c := cusum{h: -math.Log(alphaPerArrival(m.perHour*24)) + above, f: factor,
							rate: learnedRates(m.arr, s.Traffic, s.Info.Start, from)}
						falses += crossings(&c, m.arr, from, s.End)
						known := cusum{h: c.h, f: factor, rate: func(t time.Time) float64 { return m.mean(s.Traffic, s.Info.Start, t.Truncate(time.Hour)) }}
						knownFalses += crossings(&known, m.arr, from, s.End)
					}
					cleanDays += s.End.Sub(from).Hours() / 24
				}
			}
			fmt.Printf("%s, threshold +%.0f nats: finds %d of the %d drops and surges the yardstick finds (%.0f%%); %d false alarms in %.0f clean beet-days (%.2f per 1000; at the rates known, %d)\n",
				name, above, found, yard, 100*float64(found)/float64(max(yard, 1)), falses, cleanDays, 1000*float64(falses)/cleanDays, knownFalses)
		}
	}
}

func familyNamed(t *testing.T, name string) *Family {
	for _, f := range Families() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no family %q", name)
	return nil
}

func poissonModel(t *testing.T, s Stream) *rateModel {
	m, ok := s.model.(*rateModel)
	if !ok || m.nbShape > 0 || m.maxSize > 1 {
		t.Fatalf("%s: not a Poisson rate stream", s.Info.Name)
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

// firstAlarm runs c over the arrivals in [t, to): its first alarm at or
// after c.from (earlier crossings reset it), or zero.
func firstAlarm(c *cusum, arr []int64, t, to time.Time) time.Time {
	i := sort.Search(len(arr), func(i int) bool { return arr[i] >= t.UnixNano() })
	for ; ; i++ {
		next := to
		if i < len(arr) && arr[i] < to.UnixNano() {
			next = time.Unix(0, arr[i])
		}
		if at, ok := c.drift(t, next); ok {
			return at
		}
		if !next.Before(to) {
			return time.Time{}
		}
		if at, ok := c.arrival(next); ok {
			return at
		}
		t = next
	}
}

// crossings counts how often c reaches its threshold over the arrivals in
// [t, to), starting again from 0 after each: c.from is left zero, so every
// crossing is an alarm.
func crossings(c *cusum, arr []int64, t, to time.Time) int {
	n := 0
	i := sort.Search(len(arr), func(i int) bool { return arr[i] >= t.UnixNano() })
	for ; ; i++ {
		next := to
		if i < len(arr) && arr[i] < to.UnixNano() {
			next = time.Unix(0, arr[i])
		}
		for {
			at, ok := c.drift(t, next)
			if !ok {
				break
			}
			n, c.s, t = n+1, 0, at
		}
		if !next.Before(to) {
			return n
		}
		if _, ok := c.arrival(next); ok {
			n, c.s = n+1, 0
		}
		t = next
	}
}
