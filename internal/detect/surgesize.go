package detect

// sizeHoldNats is the surge CUSUM's value (the closing hour's evidence
// included) from which an hour does not teach the negative-binomial size
// at all, unless the beet's hours share a level it does not know
// (overdispersed, not bursty): a smooth beet's size says how far its
// hours stray from Poisson, a bursty beet's how its bursts' sizes vary,
// and a surge's first hours are neither (SizeCap only slows them down):
// taught, they made the next hours read as ordinary. Overdispersed beets keep
// learning from such hours: theirs reach 3 nats often enough without a
// surge that leaving them out made r 10-40% too large (TestLearnedSize)
// and doubled negbin-5's false silences on the tuning seed (2 to 4 in 108
// streams), for 8 more of the yardstick's 191 drops and surges found.
// Smooth and bursty beets only: 3 more, no false alarm more.
const sizeHoldNats = 3

// sizeCap is the bound Params.SizeCap puts on what an hour of weight w
// teaches the negative-binomial size (learn, in rate.go). In a beet's first
// week the size learns with more than Params.DispWeight (w is then about
// 2/hours), so the bound let each hour move 1/r by up to w/DispWeight times
// the documented fifth of itself: on NAB's PFE tweets a day-long rise in the
// first week took r from 2.7 to 0.8 and hid itself. While the surge
// CUSUM is building (its value, this hour included, above 0) the hour moves
// 1/r at most at the settled pace; other hours still teach a young beet its
// dispersion fast.
func (m *RateModel) sizeCap(w float32) float32 {
	k := float32(m.p.SizeCap)
	if d := float32(m.p.DispWeight); m.up.s > 0 && d > 0 && w > d {
		k *= d / w
	}
	return k
}

// surgeDispShare is the share of its weight (1/surgeDispShare) with which
// an hour closed while a surge builds (surgeBuilding) teaches the
// dispersion index D. A surge's own hours are no measure of how the
// beet's hours vary: taught in full, a Poisson beet at 2 events an hour
// whose rate went fourfold had D from 1.1 to 2.4 in two hours, and read
// as overdispersed from then on (whole hours, no smooth or slow cut) its
// surge was held back (TestSlowSurgeNotOverdispersedByItself: 75 of 144
// flagged, 99 at a third). Not none: bursts that come back hour after
// hour for days are the beet's dispersion, and held out in full, an
// hourly job bursting after every run raised a surge per burst
// (TestScheduleExtraEventsProperty). Tuning seed, 24 streams a kind:
// drops and surges found 321 -> 324 of the yardstick's 374, as many false
// alarms.
const surgeDispShare = 3

// surgeBuilding reports whether the closing hour comes while the surge
// CUSUM is at sizeHoldNats or more on a beet whose size and D do not keep
// learning from such hours (sizeHoldNats: overdispersed beets that are not
// bursty do). Not bursty, overdispersed is D ≥ windowDisp alone, so
// bursty's scan of the rates runs once.
func (m *RateModel) surgeBuilding() bool {
	return m.up.s >= sizeHoldNats && (m.disp < windowDisp || m.bursty())
}
