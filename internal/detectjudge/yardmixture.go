package detectjudge

import (
	"math"
	"sort"
	"time"
)

// The CUSUM of an overdispersed source knows the process, not its hidden
// levels (as the silence oracle does): the rate profile μ_h, the hourly
// dispersion r (the hour's hidden level G_h ~ Gamma(r)/r) and the
// day-to-day spread of levels (D_d ~ Gamma(s)/s, shared by the hours of a
// local day), but neither G_h nor D_d. Given a change by factor f from
// hour j on, the likelihood ratio of the counts since j over normal
// traffic integrates each day's level out, the hours of that day before j
// included (they tell its level, and both hypotheses share it):
//
//	Λ(j) = Σ_days ln ∫ Π_h NB(n_h; f_h·D·μ_h, r) dΓ(D) − ln ∫ Π_h NB(n_h; D·μ_h, r) dΓ(D),
//
// f_h = f from j on and 1 before. Each Λ(j) is a likelihood ratio, e^Λ a
// martingale under normal traffic, so it reaches ln(1/α) with probability
// at most α: candidates j at hour starts, α per hour (the CUSUM over
// hours of a source without a daily level is this with D = 1). The
// yardstick alarms when the largest Λ(j) over the hours
// j of the last mixWindow reaches it: a change that started earlier than
// that is not what an incident of hours is. A yardstick that knew each
// day's level found slow drops on a 5-an-hour beet that a low day makes
// as well, which no detector can tell apart.

// mixWindow is how far back, in hours, a change may have started.
const mixWindow = 48

// dayMixture is a quadrature over a day's level D ~ Gamma(s)/s: nodes and
// their log weights (density times the trapezoid's step). Without a daily
// level (s = 0) it is the single node D = 1.
type dayMixture struct{ d, logw []float64 }

// newDayMixture is the yardstick's quadrature over a day's level. The
// trapezoid rule converges fast on smooth peaks: nodes a third of the
// prior's spread apart give the judge's yardstick times 140 nodes over ±10
// spreads give, to the second (seed 1, negbin-5, negbin-50,
// u-checkout-holiday-50).
func newDayMixture(s float64) dayMixture {
	if s <= 0 {
		return dayMixture{d: []float64{1}, logw: []float64{0}}
	}
	return gammaGrid(s, 42, 7)
}

// gammaGrid is the trapezoid rule for Gamma(shape s, mean 1) on n steps
// over mean ± spreads standard deviations (from just above 0).
func gammaGrid(s float64, n int, spreads float64) dayMixture {
	sd := 1 / math.Sqrt(s)
	lo, hi := max(1e-9, 1-spreads*sd), 1+spreads*sd
	step := (hi - lo) / float64(n)
	lg, _ := math.Lgamma(s)
	grid := dayMixture{d: make([]float64, n+1), logw: make([]float64, n+1)}
	for k := range grid.d {
		d := lo + float64(k)*step
		grid.d[k] = d
		grid.logw[k] = s*math.Log(s) + (s-1)*math.Log(d) - s*d - lg + math.Log(step)
		if k == 0 || k == n {
			grid.logw[k] -= math.Ln2
		}
	}
	return grid
}

// hourTerms sets dst[k] to ln NB(n; g·D_k·mu, r) up to terms that do not
// depend on the mean (they cancel in every ratio), plus the node's weight
// when weighted.
func (x dayMixture) hourTerms(dst []float64, n int, mu, g, r float64) {
	for k, d := range x.d {
		m := max(g*d*mu, 1e-12)
		dst[k] = r*math.Log(r/(r+m)) + float64(n)*math.Log(m/(r+m))
	}
}

// lse is ln Σ_k exp(logw_k + a_k + b_k) (b may be nil).
func (x dayMixture) lse(a, b []float64) float64 {
	best := math.Inf(-1)
	for k, w := range x.logw {
		v := w + a[k]
		if b != nil {
			v += b[k]
		}
		best = max(best, v)
	}
	if math.IsInf(best, -1) {
		return best
	}
	acc := 0.0
	for k, w := range x.logw {
		v := w + a[k]
		if b != nil {
			v += b[k]
		}
		acc += math.Exp(v - best)
	}
	return best + math.Log(acc)
}

// mixHour is a closed hour's terms under normal traffic (N) and under the
// change (F), and its local day.
type mixHour struct {
	day  int
	N, F []float64
}

// mixState is what the hours before the open one say, for the candidates
// j of the open hour's day (vs: that day's terms, normal before j and
// changed from j on) and the best of the candidates on earlier days, whose
// ratios on their own days are closed (prev), plus the open day's terms
// under normal traffic (u) and under the change (w). Each is kept as
// exp(logw + terms − its max), so that adding the open hour's terms is a
// dot product, not a sum of exponentials per candidate.
type mixState struct {
	vs   []scaled
	prev float64
	u, w scaled
}

// scaled is exp(logw_k + a_k − top) over the nodes k, and top.
type scaled struct {
	e   []float64
	top float64
	raw []float64 // a, for the exact sum when the dot product underflows
}

func (x dayMixture) scale(a []float64) scaled {
	sc := scaled{e: make([]float64, len(a)), top: math.Inf(-1), raw: a}
	for k, w := range x.logw {
		sc.top = max(sc.top, w+a[k])
	}
	for k, w := range x.logw {
		sc.e[k] = math.Exp(w + a[k] - sc.top)
	}
	return sc
}

// lseWith is ln Σ_k exp(logw_k + a_k + b_k), b given as exp(b_k − bTop).
func (x dayMixture) lseWith(sc scaled, eb []float64, bTop float64, b []float64) float64 {
	acc := 0.0
	for k, v := range sc.e {
		acc += v * eb[k]
	}
	if acc < 1e-250 {
		return x.lse(sc.raw, b) // the two peaks far apart: sum exactly
	}
	return sc.top + bTop + math.Log(acc)
}

// mixtureCUSUMAlarm is when the yardstick above flags inc on an
// overdispersed source: the first arrival (surge) or instant (drop) at
// which the largest Λ(j) reaches ln(1/alpha), j from a day before the
// change on. A crossing before the change is a false alarm: the
// candidates up to it are dropped. Zero: no alarm in
// [Start, End+DetectTolerance].
func (m *rateModel) mixtureCUSUMAlarm(loc *time.Location, start time.Time, inc *Incident, alpha float64) time.Time {
	f, r := inc.Factor, m.nbShape
	if f <= 0 || f == 1 || r <= 0 {
		return time.Time{}
	}
	thr := -math.Log(alpha)
	mix := newDayMixture(m.dayShape)
	to := inc.End.Add(DetectTolerance)
	t0 := maxTime(start, inc.Start.Add(-24*time.Hour)).Truncate(time.Hour)
	lt := t0.In(loc)
	first := maxTime(start.Truncate(time.Hour), time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc).Truncate(time.Hour))
	jMin := int(t0.Sub(first) / time.Hour)
	var hours []mixHour
	a := sort.Search(len(m.arr), func(i int) bool { return m.arr[i] >= first.UnixNano() })
	K := len(mix.d)
	fi, ni, ef, en := make([]float64, K), make([]float64, K), make([]float64, K), make([]float64, K)
	for hour := first; hour.Before(to); hour = hour.Add(time.Hour) {
		i := len(hours)
		mu := m.mean(loc, start, hour)
		day := localDayKey(hour, loc)
		end := minTime(hour.Add(time.Hour), to)
		watch := i >= jMin
		var st mixState
		if watch {
			st = mixPrepare(mix, hours, day, max(jMin, i-mixWindow+1), i)
		}
		// at is the largest Λ with n arrivals so far in the hour and
		// exposure up to t.
		at := func(n int, t time.Time) float64 {
			e := t.Sub(hour).Hours()
			mix.hourTerms(ni, n, mu*e, 1, r)
			mix.hourTerms(fi, n, mu*e, f, r)
			return st.best(mix, ni, fi, en, ef)
		}
		crossed := func(t time.Time) (time.Time, bool) {
			if !t.Before(inc.Start) {
				return t, true
			}
			jMin, watch = i+1, false // a false alarm: start again after this hour
			return time.Time{}, false
		}
		n := 0
		prev := hour
		for ; a < len(m.arr) && m.arr[a] < end.UnixNano(); a++ {
			t := time.Unix(0, m.arr[a])
			if watch && f < 1 && at(n, t) >= thr {
				// A drop's statistic rises with the exposure between
				// arrivals: the crossing is in (prev, t).
				if c, ok := crossed(bisectUp(prev, t, func(u time.Time) bool { return at(n, u) >= thr })); ok {
					return c
				}
			}
			n++
			if watch && f > 1 && at(n, t) >= thr {
				if c, ok := crossed(t); ok {
					return c
				}
			}
			prev = t
		}
		if watch && f < 1 && at(n, end) >= thr {
			if c, ok := crossed(bisectUp(prev, end, func(u time.Time) bool { return at(n, u) >= thr })); ok {
				return c
			}
		}
		h := mixHour{day: day, N: make([]float64, K), F: make([]float64, K)}
		mix.hourTerms(h.N, n, mu*end.Sub(hour).Hours(), 1, r)
		mix.hourTerms(h.F, n, mu*end.Sub(hour).Hours(), f, r)
		hours = append(hours, h)
	}
	return time.Time{}
}

// mixPrepare sets up the candidates j in [lo, i] for the open hour i of
// local day day, from the closed hours before it.
func mixPrepare(mix dayMixture, hours []mixHour, day, lo, i int) mixState {
	K := len(mix.d)
	st := mixState{prev: math.Inf(-1)}
	// The open day's hours so far.
	d0 := i
	for d0 > 0 && hours[d0-1].day == day {
		d0--
	}
	u, w := sumTerms(hours[d0:i], K)
	st.u, st.w = mix.scale(u), mix.scale(w)
	// Candidates in the open day, from j = i down: normal before j,
	// changed from j on.
	v := append([]float64(nil), u...)
	for j := i; j >= max(lo, d0); j-- {
		if j < i {
			for k := range v {
				v[k] += hours[j].F[k] - hours[j].N[k]
			}
		}
		st.vs = append(st.vs, mix.scale(append([]float64(nil), v...)))
	}
	// Candidates on closed days: their own day's ratio, then every closed
	// day after it changed throughout.
	after := 0.0 // Σ over closed days after the candidate's of ln ∫F − ln ∫N
	for e := d0; e > lo; {
		s := e - 1
		for s > 0 && hours[s-1].day == hours[e-1].day {
			s--
		}
		sumN, sumF := sumTerms(hours[s:e], K)
		den := mix.lse(sumN, nil)
		vj := append([]float64(nil), sumN...)
		for j := e - 1; j >= max(s, lo); j-- {
			for k := range vj {
				vj[k] += hours[j].F[k] - hours[j].N[k]
			}
			st.prev = max(st.prev, mix.lse(vj, nil)-den+after)
		}
		after += mix.lse(sumF, nil) - den
		e = s
	}
	return st
}

// sumTerms adds up hours' terms under normal traffic and under the change.
func sumTerms(hours []mixHour, K int) (n, f []float64) {
	n, f = make([]float64, K), make([]float64, K)
	for _, h := range hours {
		for k := range n {
			n[k] += h.N[k]
			f[k] += h.F[k]
		}
	}
	return n, f
}

// best is the largest Λ(j) given the open hour's terms so far under
// normal traffic (ni) and under the change (fi).
func (st *mixState) best(mix dayMixture, ni, fi, en, ef []float64) float64 {
	nTop, fTop := expScaled(en, ni), expScaled(ef, fi)
	den := mix.lseWith(st.u, en, nTop, ni)
	b := st.prev + mix.lseWith(st.w, ef, fTop, fi) - den
	for _, v := range st.vs {
		b = max(b, mix.lseWith(v, ef, fTop, fi)-den)
	}
	return b
}

// expScaled sets dst to exp(a − max a) and returns max a.
func expScaled(dst, a []float64) float64 {
	top := math.Inf(-1)
	for _, v := range a {
		top = max(top, v)
	}
	for k, v := range a {
		dst[k] = math.Exp(v - top)
	}
	return top
}

// localDayKey identifies t's local day in loc.
func localDayKey(t time.Time, loc *time.Location) int {
	lt := t.In(loc)
	return lt.Year()*1000 + lt.YearDay()
}

// bisectUp finds to a second the first u in (a, b] at which ok(u) holds,
// given that ok(b) does and ok is monotone on (a, b].
func bisectUp(a, b time.Time, ok func(time.Time) bool) time.Time {
	lo, hi := a, b
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
