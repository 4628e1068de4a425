package detect

import "math"

// dispClipLoss is what the bound takes from an hour of the learned model
// beyond what it takes from a Poisson hour (clipLoss's difference): the
// bound still keeps a near-Poisson beet's chance hours from making it
// overdispersed (sizeCapFloor), as before, and no longer trims the
// dispersion the beet has shown.
func dispClipLoss(mu, u, r, cap float64) float64 {
	return max(0, clipLoss(mu, u, r, cap)-clipLoss(mu, u, math.Inf(1), cap))
}

// clipLoss is what Params.SizeCap's bound takes, on average, from an hour
// of mu expected events that follows the learned model: E[(y − cap)+] for
// y = (c − mu)² − u·mu, the count c taken as Gamma with the mean mu and
// the variance u·mu + mu²/r of such hours (r may be +Inf: Poisson hours).
// learn adds it back to every hour of an overdispersed beet
// (dispClipLoss), so that the bound still keeps one wild hour from
// teaching r much, but no longer biases r upward on traffic whose hours
// are that wild: the bound is relative to the average hour's µ², and a
// busy hour of a very overdispersed beet (r near 1) passes it often, which
// made r about a third too large on a seasonal beet (TestLearnedSize).
// Only counts above mu are counted: below it, (c − mu)² ≤ mu², which the
// bound (at least Params.SizeCap/sizeCapFloor of the average µ²) seldom
// reaches. Runs once per closed hour, 66 Exp and Log at most.
func clipLoss(mu, u, r, cap float64) float64 {
	v := u*mu + mu*mu/r
	if mu <= 0 || v <= 0 {
		return 0
	}
	s, th := mu*mu/v, v/mu // shape and scale
	t0 := mu + math.Sqrt(cap+u*mu)
	sd := math.Sqrt(v)
	if t0-mu > 12*max(sd, th) {
		return 0 // beyond any tail worth counting (e^−12 of it at most)
	}
	lg, _ := math.Lgamma(s)
	norm := lg + s*math.Log(th)
	f := func(c float64) float64 {
		d := c - mu
		return (d*d - cap - u*mu) * math.Exp((s-1)*math.Log(c)-c/th-norm)
	}
	// Simpson's rule over [t0, t0 + 20θ]: the density falls at least as
	// fast as e^(−c/θ) there (c above the mode).
	const n = 32
	h := 20 * th / n
	sum := f(t0) + f(t0+n*h)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(t0+float64(i)*h)
	}
	return max(0, sum*h/3)
}
