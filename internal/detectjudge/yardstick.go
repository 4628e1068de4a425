package detectjudge

import (
	"math"
	"sort"
	"time"
)

// The yardsticks: reference detectors that know each stream's generating
// process, run at the same false-alarm budget as the goal Beet is held to,
// so that "how long did Beet take" can be read against "how long did it
// have to take". A silence (an outage, a missed run) is measured against
// the silence oracle, a drop or a surge against a CUSUM that knows the
// rates before and after the change. Neither knows a source's hidden
// levels (the hour's and the day's of an overdispersed one): both
// integrate them out (logSilence, yardmixture.go).
//
// Both alarm when the evidence that traffic is not normal reaches a
// threshold set by the budget. On a stream of N arrivals a day (events, or
// bursts for a bursty source), each arrival starts at most one excursion of
// the statistic (a silence, or a CUSUM run away from 0), and an excursion
// reaches a threshold of ln(1/α) with probability at most α (for the
// silence, by definition of its tail probability; for the CUSUM, by Wald's
// likelihood-ratio bound: e^S is a martingale under normal traffic). So
// α = YardstickBudget / N per arrival keeps either to at most YardstickBudget
// false alarms a day.

// YardstickBudget is the false-alarm budget the yardsticks run at: 0.5
// false alarms per 1000 beet-days (the detector's goal), per day.
const YardstickBudget = 0.5 / 1000

// Yardstick names.
const (
	YardOracle = "oracle" // silences: the silence oracle
	YardCUSUM  = "cusum"  // drops and surges: the CUSUM
)

// alphaPerArrival is the per-arrival false-alarm probability of a stream
// with arrivalsPerDay arrivals a day on average.
func alphaPerArrival(arrivalsPerDay float64) float64 {
	return YardstickBudget / max(arrivalsPerDay, YardstickBudget)
}

// yardstick on a rate stream: the silence oracle for outages, the CUSUM
// for drops and surges.
func (m *rateModel) yardstick(loc *time.Location, start time.Time, inc *Incident) {
	alpha := alphaPerArrival(m.perHour * 24)
	switch inc.Spec.Kind {
	case IncidentOutage:
		inc.Yardstick = YardOracle
		inc.YardAt = m.silenceAlarm(loc, start, inc, alpha)
	case IncidentDrop, IncidentSurge:
		inc.Yardstick = YardCUSUM
		if m.nbShape > 0 {
			// Its candidate changes start at hour boundaries.
			inc.YardAt = m.mixtureCUSUMAlarm(loc, start, inc, alphaPerArrival(24))
		} else {
			inc.YardAt = m.cusumAlarm(loc, start, inc, alpha)
		}
	}
}

// silenceAlarm is when the silence oracle flags inc: the first instant t at
// which the silence since the last arrival L before the incident has become
// rarer than alpha, P(no arrival in [L, t]) ≤ alpha, under normal traffic
// (see logSilence: the oracle knows the profile and the dispersion, not
// the hidden levels). An alarm that would come before the incident starts
// is dated at its start. Zero: no alarm before the silence ends (the next
// arrival) or the detection window closes, or fewer than minRunsBefore
// arrivals came before it (too little seen to call anything a silence).
func (m *rateModel) silenceAlarm(loc *time.Location, start time.Time, inc *Incident, alpha float64) time.Time {
	i := sort.Search(len(m.arr), func(i int) bool { return m.arr[i] >= inc.Start.UnixNano() })
	if i < minRunsBefore {
		return time.Time{}
	}
	last := time.Unix(0, m.arr[i-1])
	limit := inc.End.Add(DetectTolerance)
	if i < len(m.arr) {
		limit = minTime(limit, time.Unix(0, m.arr[i]))
	}
	at, ok := firstCrossing(last, limit, math.Log(alpha), func(t time.Time) float64 {
		return m.logSilence(loc, start, last, t)
	})
	if !ok {
		return time.Time{}
	}
	return maxTime(at, inc.Start)
}

// logSilence is ln P(no arrival in [a, b)) under normal traffic. Poisson:
// −mean. With hidden levels (overdispersed sources) the count in a part τ
// of real hour h is Poisson(μ_h·τ·G_h·D_d), G_h ~ Gamma(r)/r independent per
// hour, D_d ~ Gamma(s)/s shared by the hours of local day d, so
//
//	P = Π_d E_D[ Π_{h in d} (1 + D·μ_h·τ/r)^(−r) ]
//
// with the expectation over D taken numerically.
func (m *rateModel) logSilence(loc *time.Location, start, a, b time.Time) float64 {
	type part struct {
		day int
		mu  float64
	}
	var parts []part
	total := 0.0
	for h := a.Truncate(time.Hour); h.Before(b); h = h.Add(time.Hour) {
		lo, hi := maxTime(h, a), minTime(h.Add(time.Hour), b)
		mu := m.mean(loc, start, h) * hi.Sub(lo).Hours()
		lt := h.In(loc)
		parts = append(parts, part{lt.Year()*1000 + lt.YearDay(), mu})
		total += mu
	}
	if m.nbShape == 0 && m.dayShape == 0 {
		return -total
	}
	hourTerm := func(mu float64) float64 { // ln P(0) of one hour's part given its day's level
		if m.nbShape == 0 {
			return -mu
		}
		return -m.nbShape * math.Log1p(mu/m.nbShape)
	}
	sum := 0.0
	for i := 0; i < len(parts); {
		j := i
		for j < len(parts) && parts[j].day == parts[i].day {
			j++
		}
		day := parts[i:j]
		if m.dayShape == 0 {
			for _, p := range day {
				sum += hourTerm(p.mu)
			}
		} else {
			sum += logGammaMean(m.dayShape, func(d float64) float64 {
				v := 0.0
				for _, p := range day {
					v += hourTerm(d * p.mu)
				}
				return v
			})
		}
		i = j
	}
	return sum
}

// logGammaMean is ln E[exp(g(D))] for D ~ Gamma(shape s, mean 1), by the
// trapezoid rule on a grid of 400 steps over mean ± 12 standard deviations.
func logGammaMean(s float64, g func(float64) float64) float64 {
	grid := gammaGrid(s, 400, 12)
	vals := make([]float64, len(grid.d))
	for k, d := range grid.d {
		vals[k] = g(d)
	}
	return grid.lse(vals, nil)
}

// firstCrossing returns the first t in (from, to) at which f(t) ≤ thr, for
// f non-increasing in t: it steps over whole hours (f is piecewise smooth
// between them) and bisects the hour it crosses in to a second.
func firstCrossing(from, to time.Time, thr float64, f func(time.Time) float64) (time.Time, bool) {
	for t := from; t.Before(to); {
		u := minTime(t.Truncate(time.Hour).Add(time.Hour), to)
		if f(u) <= thr {
			hi := bisectUp(t, u, func(x time.Time) bool { return f(x) <= thr })
			if !hi.Before(to) {
				return time.Time{}, false // the silence ended first
			}
			return hi, true
		}
		t = u
	}
	return time.Time{}, false
}

// cusumAlarm is when a CUSUM that knows the rates before and after the
// change flags inc on a Poisson source: before, the stream's rate λ(t)
// (its profile); after, λ(t) times inc.Factor = f. Its statistic is the
// log-likelihood ratio of the arrivals, S = max(0, S + ln f at each arrival
// − (f − 1)·λ(t)dt between them), started at 0 a day before the change
// (and reset to 0 by an alarm before it); it alarms when S reaches
// ln(1/alpha). Zero: no alarm in [Start, End+DetectTolerance].
func (m *rateModel) cusumAlarm(loc *time.Location, start time.Time, inc *Incident, alpha float64) time.Time {
	f := inc.Factor
	if f <= 0 || f == 1 {
		return time.Time{}
	}
	c := cusum{h: -math.Log(alpha), f: f, from: inc.Start, rate: func(t time.Time) float64 { return m.mean(loc, start, t.Truncate(time.Hour)) }}
	t := maxTime(start, inc.Start.Add(-24*time.Hour))
	to := inc.End.Add(DetectTolerance)
	i := sort.Search(len(m.arr), func(i int) bool { return m.arr[i] >= t.UnixNano() })
	for ; ; i++ {
		next := to
		if i < len(m.arr) && m.arr[i] < to.UnixNano() {
			next = time.Unix(0, m.arr[i])
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

// cusum is the state of a Poisson CUSUM for a rate change by factor f,
// rate(t) being the rate before the change (constant within real hours).
type cusum struct {
	h, f, s float64
	from    time.Time // alarms before it are false: they reset s
	rate    func(time.Time) float64
}

// drift moves the statistic from a to b with no arrival between: down by
// (f − 1)·λ dt for a surge, up by (1 − f)·λ dt for a drop, where it may
// cross h between arrivals.
func (c *cusum) drift(a, b time.Time) (time.Time, bool) {
	for t := a; t.Before(b); {
		u := minTime(t.Truncate(time.Hour).Add(time.Hour), b)
		slope := (1 - c.f) * c.rate(t) // per hour
		dt := u.Sub(t).Hours()
		switch {
		case slope <= 0:
			c.s = max(0, c.s+slope*dt)
		case c.s+slope*dt < c.h:
			c.s += slope * dt
		default:
			cross := t.Add(time.Duration((c.h - c.s) / slope * float64(time.Hour)))
			if !cross.Before(c.from) {
				return cross, true
			}
			c.s = 0 // a false alarm before the change: start again from it
			u = cross
		}
		t = u
	}
	return time.Time{}, false
}

// arrival adds an arrival at t.
func (c *cusum) arrival(t time.Time) (time.Time, bool) {
	c.s = max(0, c.s+math.Log(c.f))
	if c.s < c.h {
		return time.Time{}, false
	}
	if !t.Before(c.from) {
		return t, true
	}
	c.s = 0
	return time.Time{}, false
}

// yardstick on a scheduled job: a missed run is flagged by the oracle the
// moment a normal run would certainly have reported (its start ping for a
// job that sends one, its randomised delay after the slot, else the latest
// a normal run ends, lateMax after its slot), provided the job ran minRunsBefore times before it (Detectable).
// Normal runs never report later, so this oracle raises no false alarm at
// all; one held to the budget could flag a little earlier, inside the 1%
// tail of very late runs (by under a tenth of the spread of run times).
func (m *scheduleModel) yardstick(_ *time.Location, start time.Time, inc *Incident) {
	if inc.Spec.Kind != IncidentMissedRun {
		return
	}
	inc.Yardstick = YardOracle
	if !inc.Detectable {
		return
	}
	if loop, ok := m.cal.(*loopCal); ok {
		// A loop's next ping is certain a sleep and its longest run after
		// the one before; when the missed run would have ended is not
		// known (its slot is the ping it did not send).
		inc.YardAt = loop.before(inc.Start).Add(loop.longest() + m.lateMax())
		return
	}
	bound := m.lateMax()
	if m.startEnd {
		bound = m.delay + min(5*time.Second, m.spread/10) // a start ping comes as the run starts: at most the delay after its slot
	} else if g := m.grown(start, inc.Start); g > 0 {
		// place knows no stream start: a growing job's run ends later.
		bound += g
		inc.Due, inc.Latest = inc.Due.Add(g), inc.Latest.Add(g)
	}
	inc.YardAt = inc.Start.Add(time.Duration(m.skipRuns()-1)*m.period + bound)
}

// skipRuns is how many runs in a row must be missing before the oracle
// flags a job that skips runs at random (skipP): the fewest k whose chance,
// q^k per slot over a day's slots, is within the false-alarm budget
// (YardstickBudget per beet-day). 1 for a job that never skips.
func (m *scheduleModel) skipRuns() int {
	if m.skipP <= 0 {
		return 1
	}
	perDay := float64(24*time.Hour) / float64(m.period)
	k := 1
	for perDay*math.Pow(m.skipP, float64(k)) > YardstickBudget {
		k++
	}
	return k
}
