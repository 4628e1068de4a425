package detectjudge

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// rateModel is traffic with a rate: a non-homogeneous Poisson process of
// arrivals with rate perHour × hour-of-day factor × day-of-week factor in
// local time × a trend, optionally overdispersed (a Gamma multiplier per real
// hour makes hourly counts negative-binomial, and a milder one per day makes
// slow and busy days), optionally bursty (each arrival is a burst of events).
type rateModel struct {
	perHour  float64     // weekly mean arrivals per hour (before the trend)
	hour     [24]float64 // mean 1 over the hours with traffic
	dow      [7]float64  // mean 1, indexed by time.Weekday
	nbShape  float64     // hourly Gamma shape r (0: Poisson); variance m + m²/r
	dayShape float64     // daily Gamma shape (0: none)
	trend    float64     // growth per day of the rate (ln factor), 0: none
	// Bursts: each arrival is a burst of minSize..maxSize events (uniform),
	// gaps between its events exponential with mean burstGap seconds.
	minSize, maxSize int
	burstGap         float64
	// holiday is how many days after the stream's start a public holiday
	// comes (the first weekday from then; 0: none): its traffic follows the
	// Sunday profile.
	holiday int
	// For the yardsticks, what generate drew: the arrival times (Unix ns;
	// a burst is one arrival), and the daily level in force in each real
	// hour from the stream's start (1 without daily levels).
	arr      []int64
	dayLevel []float64
	// learned, when set, is the rate the yardsticks read instead of the
	// profile's: a learner's (TestLearnedRatesCUSUM).
	learned func(time.Time) float64
}

// newSeasonal draws a beet's weekly profile: a daytime bump whose peak hour,
// width and night floor vary per beet, and a weekend level.
func newSeasonal(r *rand.Rand, perHour float64) *rateModel {
	m := &rateModel{perHour: perHour}
	floor := 0.05 + 0.35*r.Float64()
	peak := 11 + 9*r.Float64()
	width := 3 + 3*r.Float64()
	for h := range m.hour {
		d := math.Abs(float64(h) + 0.5 - peak)
		d = math.Min(d, 24-d)
		m.hour[h] = floor + (1-floor)*math.Exp(-0.5*(d/width)*(d/width))
	}
	weekend := 0.4 + 0.6*r.Float64()
	for d := range m.dow {
		m.dow[d] = 1
		if isWeekend(time.Weekday(d)) {
			m.dow[d] = weekend
		}
	}
	m.normalise()
	return m
}

// newWorkHours is traffic only on weekdays within working hours (a start
// between 07:00 and 10:00, 8 to 10 hours long), flat inside.
func newWorkHours(r *rand.Rand, perHour float64) *rateModel {
	m := &rateModel{perHour: perHour}
	from := 7 + r.IntN(4)
	to := from + 8 + r.IntN(3)
	for h := from; h < to; h++ {
		m.hour[h] = 1
	}
	for d := range m.dow {
		if !isWeekend(time.Weekday(d)) {
			m.dow[d] = 1
		}
	}
	m.normalise()
	return m
}

// weekdaysOnly silences the weekend of a seasonal profile.
func (m *rateModel) weekdaysOnly() *rateModel {
	m.dow[time.Saturday], m.dow[time.Sunday] = 0, 0
	m.normalise()
	return m
}

// normalise scales hour and dow so that the mean rate over a week is perHour.
func (m *rateModel) normalise() {
	sum := 0.0
	for _, v := range m.hour {
		sum += v
	}
	for h := range m.hour {
		m.hour[h] *= 24 / sum
	}
	sum = 0
	for _, v := range m.dow {
		sum += v
	}
	for d := range m.dow {
		m.dow[d] *= 7 / sum
	}
}

func isWeekend(d time.Weekday) bool { return d == time.Saturday || d == time.Sunday }

// mean is the expected arrivals in the real hour starting at h (local
// profile, trend), before noise and incidents.
func (m *rateModel) mean(loc *time.Location, start, h time.Time) float64 {
	if m.learned != nil {
		return m.learned(h)
	}
	lt := h.In(loc)
	dow := lt.Weekday()
	if m.holiday != 0 && sameDay(lt, m.holidayDate(loc, start)) {
		dow = time.Sunday
	}
	v := m.perHour * m.hour[lt.Hour()] * m.dow[dow]
	if m.trend != 0 {
		v *= math.Exp(m.trend * h.Sub(start).Hours() / 24)
	}
	return v
}

// holidayDate is the local noon of the holiday: the first weekday at least
// m.holiday days after start.
func (m *rateModel) holidayDate(loc *time.Location, start time.Time) time.Time {
	s := start.In(loc)
	d := time.Date(s.Year(), s.Month(), s.Day()+m.holiday, 12, 0, 0, 0, loc)
	for isWeekend(d.Weekday()) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

func sameDay(a, b time.Time) bool {
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

func (m *rateModel) settled(*time.Location, time.Time) time.Time { return time.Time{} }

func (m *rateModel) excused(*time.Location, time.Time, time.Time) []Window { return nil }

func (m *rateModel) place(r *rand.Rand, _ *time.Location, u time.Time, inc *Incident) bool {
	spec := inc.Spec
	switch spec.Kind {
	case IncidentOutage, IncidentDrop, IncidentSurge:
	default:
		return false
	}
	inc.Start = u.Truncate(time.Minute)
	inc.End = inc.Start.Add(spec.Duration)
	inc.Factor = spec.Factor
	if spec.FactorMax > spec.Factor {
		inc.Factor += r.Float64() * (spec.FactorMax - spec.Factor)
	}
	return true
}

func (m *rateModel) generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event {
	// Breakpoints: every real hour (the rate is constant within a local
	// hour; all zones used have whole-hour offsets) and every incident edge.
	// Walking real hours means a DST fall-back hour is lived twice and a
	// spring-forward hour not at all, as real traffic does.
	var cuts []time.Time
	for _, in := range inc {
		cuts = append(cuts, in.Start, in.End)
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	var evs []Event
	m.arr, m.dayLevel = m.arr[:0], m.dayLevel[:0]
	hourMult, dayMult := 1.0, 1.0
	lastDay := -1
	for h := start.Truncate(time.Hour); h.Before(end); h = h.Add(time.Hour) {
		if m.nbShape > 0 {
			hourMult = gamma(r, m.nbShape) / m.nbShape
		}
		if day := h.In(loc).YearDay(); m.dayShape > 0 && day != lastDay {
			dayMult, lastDay = gamma(r, m.dayShape)/m.dayShape, day
		}
		base := m.mean(loc, start, h) * hourMult * dayMult
		m.dayLevel = append(m.dayLevel, dayMult)
		segStart, hEnd := maxTime(h, start), minTime(h.Add(time.Hour), end)
		for segStart.Before(hEnd) {
			segEnd := hEnd
			for _, c := range cuts {
				if c.After(segStart) && c.Before(segEnd) {
					segEnd = c
				}
			}
			rate := base * incidentFactor(inc, segStart)
			evs = m.arrivals(r, evs, segStart, segEnd, rate, inc)
			segStart = segEnd
		}
	}
	evs = removeOutages(evs, inc) // also sorts: bursts overlap
	for len(evs) > 0 && !evs[len(evs)-1].T.Before(end) {
		evs = evs[:len(evs)-1] // a burst spilling past the end of the stream
	}
	return evs
}

// arrivals appends the arrivals of a Poisson process of rate per hour on
// [a, b): exponential gaps, restarted at each segment, which is exact
// because the process is memoryless. It counts them into the incidents
// that cover them.
func (m *rateModel) arrivals(r *rand.Rand, evs []Event, a, b time.Time, rate float64, inc []Incident) []Event {
	if rate <= 0 {
		return evs
	}
	t := a
	for {
		t = t.Add(time.Duration(r.ExpFloat64() / rate * float64(time.Hour)))
		if !t.Before(b) {
			return evs
		}
		for k := range inc {
			if inc[k].covers(t) {
				inc[k].Arrivals++
			}
		}
		m.arr = append(m.arr, t.UnixNano())
		if m.maxSize <= 1 {
			evs = append(evs, Event{T: t, Count: 1})
			continue
		}
		n := m.minSize + r.IntN(m.maxSize-m.minSize+1)
		bt := t
		for k := 0; k < n; k++ {
			evs = append(evs, Event{T: bt, Count: 1})
			bt = bt.Add(time.Duration(r.ExpFloat64() * m.burstGap * float64(time.Second)))
		}
	}
}

// incidentFactor is the rate factor in force at t.
func incidentFactor(inc []Incident, t time.Time) float64 {
	f := 1.0
	for k := range inc {
		if !inc[k].covers(t) {
			continue
		}
		switch inc[k].Spec.Kind {
		case IncidentOutage:
			f = 0
		case IncidentDrop, IncidentSurge:
			f *= inc[k].Factor
		}
	}
	return f
}

// moments returns the mean and variance of the arrivals in [a, b) under
// normal traffic: Poisson given the hourly and daily Gamma multipliers
// (mean 1, variances 1/r and 1/s), so
//
//	Var = μ + Σ_h μ_h²·(1/r + 1/(r·s)) + Σ_d M_d²/s
//
// with μ_h the hour's mean and M_d the day's.
func (m *rateModel) moments(loc *time.Location, start, a, b time.Time) (mean, variance float64) {
	var invR, invS float64
	if m.nbShape > 0 {
		invR = 1 / m.nbShape
	}
	if m.dayShape > 0 {
		invS = 1 / m.dayShape
	}
	days := map[int]float64{}
	for h := a.Truncate(time.Hour); h.Before(b); h = h.Add(time.Hour) {
		lo, hi := maxTime(h, a), minTime(h.Add(time.Hour), b)
		mu := m.mean(loc, start, h) * hi.Sub(lo).Hours()
		mean += mu
		variance += mu * mu * (invR + invR*invS)
		days[h.In(loc).YearDay()] += mu
	}
	for _, md := range days {
		variance += md * md * invS
	}
	return mean, mean + variance
}

func (m *rateModel) judge(loc *time.Location, start time.Time, inc *Incident) {
	mean, variance := m.moments(loc, start, inc.Start, inc.End)
	switch inc.Spec.Kind {
	case IncidentSurge:
		inc.PValue = upperTail(inc.Arrivals, mean, variance)
	default: // outage, drop
		inc.PValue = lowerTail(inc.Arrivals, mean, variance)
	}
	inc.Detectable = inc.PValue <= OracleAlpha
}

// gamma draws Gamma(shape, 1) by Marsaglia and Tsang's method (shape ≥ 1;
// smaller shapes use the x·U^(1/shape) boost).
func gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
