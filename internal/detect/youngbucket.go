package detect

// borrowed is the expected rate of the hour from unix when its bucket is
// a weekend hour not yet warm but the same hour on weekdays is: a beet's
// first weekend has no baseline of its own, and a surge far above the
// weekday hour (NAB's ELB Apr 12) is tested against that, surge only.
func (m *RateModel) borrowed(unix int64) (float64, bool) {
	b := m.bucket(unix)
	if b < 24 || m.warm(unix) {
		return 0, false
	}
	w := m.rate[b-24]
	if w < 0 || m.seen(unix, b-24) < m.p.WarmSamples-1 { // two weekdays: a first weekend comes that early
		return 0, false
	}
	return float64(w), true
}
