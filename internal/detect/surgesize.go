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
