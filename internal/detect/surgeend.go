package detect

import "math"

// flagCalm (lifeState.flags): an open surge's CUSUM was 0 through a whole
// hour of closed windows.
const flagCalm = 1 << 6

// surgeOver reports whether an open surge has ended: the closed hours
// have brought its CUSUM back to 0 and the open hour adds no surge
// evidence. The open hour alone cannot end it: on a busy beet the first
// minutes of a normal hour outweigh the capped CUSUM, and a surge that
// comes in spikes (NAB's AAPL tweets: a spike at 19:02, another at 20:07)
// would flap, recovered at the first quiet minutes and raised again at the
// next spike, one incident paged as two.
func (m *RateModel) surgeOver() bool {
	return m.flags&flagCalm != 0 && m.partial(m.p.SurgeRatio) <= 0 &&
		float64(m.dn.s)+m.partial(m.p.DropRatio) <= 0
}

// noteCalm sets flagCalm once an open surge's CUSUM has been at 0 for an
// hour of closed windows, up to end: a window alone is too short a calm
// between two spikes.
func (m *RateModel) noteCalm(end int64) {
	if m.flags&flagSurge == 0 {
		return
	}
	if m.up.s <= 0 && m.up.start != 0 && end-int64(m.up.start) >= 3600 {
		m.flags |= flagCalm
	} else {
		m.flags &^= flagCalm
	}
}

// surgeHeld is the evidence x a closed hour (c events, mu expected, size
// r, in burst units) gives an open surge: none against it while the hour
// is nearer halfway to the surge (√SurgeRatio × normal) than to normal.
// Hours at 1.6× normal between two spikes are not "back to normal", and
// a recovery then is followed by the same surge's next spike raised as a
// new one (NAB's FB tweets, Apr 22: 4×, 1.6×, 1.6×, 2.4×, 7×).
func (m *RateModel) surgeHeld(x, c, mu, r float64) float64 {
	if m.flags&flagSurge == 0 || x >= 0 {
		return x
	}
	if nbLLR(math.Sqrt(m.p.SurgeRatio), c, mu, r) > 0 {
		return 0
	}
	return x
}
