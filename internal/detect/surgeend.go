package detect

import (
	"math"
	"time"
)

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

// noteCalm sets flagCalm after a closed hour of an open surge that began
// and ended with its CUSUM at 0 (calm: at 0 before the hour).
func (m *RateModel) noteCalm(calm bool) {
	if m.flags&flagSurge == 0 {
		return
	}
	if calm && m.up.s <= 0 {
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

// outageHoursUsual counts the open hour's part of an outage that just
// ended (from prev, the last event before it, or the hour's start) as the
// events usually seen in it, as the outage's closed hours teach nothing
// (Freeze). Counted as seen, the silent minutes before the event that ended
// the outage read as a drop: the recovery was followed at once by a drop
// alarm, one outage paged twice.
func (m *RateModel) outageHoursUsual(prev time.Time) {
	from := time.Unix(m.hourStart, 0)
	if prev.After(from) {
		from = prev
	}
	if to := time.UnixMicro(m.last); to.After(from) {
		m.hourCount += float32(m.Expected(from, to))
	}
}
