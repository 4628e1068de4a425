package detectjudge

import "math"

// OracleAlpha is the tail probability below which the oracle calls an
// incident detectable in principle.
//
// The oracle knows the generating process of the stream (its rate profile,
// trend, dispersion and burst structure, or its calendar and the spread of
// its runs) and when the incident started and ended. For a rate incident it
// counts the arrivals in [Start, End) (events, or bursts for bursty
// sources: a burst is one arrival) and asks how likely at most that many
// (outage, drop) or at least that many (surge) would be under normal
// traffic; the incident is detectable if that probability is at most
// OracleAlpha. 1e-5 is chosen so that the oracle itself would meet the
// false-alarm goal: run at every whole hour with the incident's length, such
// a test fires on normal traffic about 24,000 × 1e-5 = 0.24 times per 1000
// beet-days (overlapping tests are correlated, so fewer).
//
// Normal counts are Poisson for Poisson sources; for overdispersed ones the
// count is a Gamma-Poisson mixture, approximated by the negative binomial
// with the exact mean and variance (rateModel.moments).
//
// A schedule incident (a missed run, a stuck run, a late run) is outside
// what normal runs ever do (a run's lateness has a bounded spread, see
// scheduleModel), so its p-value is 0 and it is detectable, provided the
// job ran at least minRunsBefore times before it: a pattern seen fewer
// times cannot be told from chance by anyone who did not write the cron line.
const OracleAlpha = 1e-5

// minRunsBefore is how many runs a schedule must have shown before an
// incident on it counts as detectable in principle.
const minRunsBefore = 3

// lowerTail is P(N ≤ n) for N with the given mean and variance (Poisson
// when the variance does not exceed the mean, else negative binomial).
func lowerTail(n int, mean, variance float64) float64 {
	if mean <= 0 {
		return 1
	}
	lp := logPMF(mean, variance)
	sum := 0.0
	for k := 0; k <= n; k++ {
		sum += math.Exp(lp(k))
	}
	return math.Min(1, sum)
}

// upperTail is P(N ≥ n).
func upperTail(n int, mean, variance float64) float64 {
	if n <= 0 {
		return 1
	}
	if mean <= 0 {
		return 0
	}
	lp := logPMF(mean, variance)
	// Sum from n upwards while the terms matter; past the mode they shrink
	// geometrically, so this ends.
	sum := 0.0
	for k := n; ; k++ {
		v := math.Exp(lp(k))
		sum += v
		if float64(k) > mean && (v < 1e-18 || v < sum*1e-12) {
			break
		}
		if k > n+10_000_000 {
			break
		}
	}
	return math.Min(1, sum)
}

// logPMF returns the log probability mass function of the Poisson (variance
// ≤ mean) or negative binomial with the given mean and variance.
func logPMF(mean, variance float64) func(int) float64 {
	if variance <= mean*(1+1e-9) {
		lm := math.Log(mean)
		return func(k int) float64 {
			lg, _ := math.Lgamma(float64(k) + 1)
			return float64(k)*lm - mean - lg
		}
	}
	size := mean * mean / (variance - mean)
	p := size / (size + mean)
	lgs, _ := math.Lgamma(size)
	lp, lq := math.Log(p), math.Log1p(-p)
	return func(k int) float64 {
		a, _ := math.Lgamma(float64(k) + size)
		b, _ := math.Lgamma(float64(k) + 1)
		return a - lgs - b + size*lp + float64(k)*lq
	}
}
