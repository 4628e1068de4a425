package detect

import (
	"math"
	"time"

	"github.com/beethq/beet"
)

// ExpectedBand gives, for n buckets of width step from from, what a beet
// in auto mode is expected to see per bucket by its learned model (mid) and
// a band around it (lo, hi: about two standard deviations of a Poisson
// count), for charts. ok is false when there is no armed model to ask: a
// beet that is not in auto mode, or is still learning.
//
// The model counts bursts (events less than a minute apart count once),
// so for bursty beets the band sits below the raw event counts.
func ExpectedBand(b *beet.Beet, from time.Time, step time.Duration, n int) (lo, mid, hi []float64, ok bool) {
	if b.Detection.Mode != beet.ModeAuto || len(b.Model) == 0 || n <= 0 || step <= 0 {
		return nil, nil, nil, false
	}
	loc, err := time.LoadLocation(b.Timezone)
	if err != nil {
		loc = time.UTC
	}
	m, err := LoadRateModel(b.Model, loc)
	if err != nil || !m.Armed() {
		return nil, nil, nil, false
	}
	lo, mid, hi = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		a := from.Add(time.Duration(i) * step)
		e := m.Expected(a, a.Add(step))
		sd := 2 * math.Sqrt(e)
		mid[i], lo[i], hi[i] = e, math.Max(0, e-sd), e+sd
	}
	return lo, mid, hi, true
}
