package detect

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// scheduleState is the calendar schedule's: the latest cluster (events
// closer than clusterGap) and the schedule over cluster starts.
type scheduleState struct {
	cluster    int64  // Unix seconds: the latest run's slot (the schedule's phase, the early edge of runs)
	clusterN   uint8  // events in the latest cluster, saturating
	calls      uint8  // calls (groups of events) in the latest cluster, saturating
	period     uint32 // seconds between slots; 0: none yet
	streak     uint8  // consecutive runs on the schedule
	lateMean   uint16 // mean lateness of runs after their slot, seconds (EWMA)
	lateMax    uint16 // largest lateness seen since the schedule was learned, seconds
	daysOn     uint8  // days of the week (bit 0 Sunday) the schedule runs on; 0: not known
	daysMissed uint8  // days whose last expected run was missing
	winLo      uint16 // periods under a day: the first and last slot of the day, local minutes; noWindow: none (whole days: a pending step)
	winHi      uint16
	endOff     uint16 // seconds from the latest run to its second ping (a start+end job: the streak's longest run); 0: none
	extraN     uint8  // extra pings, leaky: +4 each beyond one a period, −1 a run; up to 31 (extraCount)
	endRunN    uint8  // start+end runs in a row, up to endRunsSure (endRuns)
	pair       uint8  // pairRunPings: a second ping since the latest run; flagPairOnce
	calDay     uint16 // local day (since 1970-01-01) the schedule was first seen: days and window are known after a week
	shiftDay   int16  // local day a whole-hour shift of the runs was followed (negative: runs came earlier); 0: none

	tooOften bool // the latest Observe found a schedule's extra runs persisting; not stored
}

// The schedule's flags (lifeState.flags).
const (
	flagSuspended = 1 << 3 // the schedule is suspended: the latest cluster holds more than a run's events
	flagResumed   = 1 << 4 // the schedule resumed during an open incident: it holds whatever the streak, which counts the runs since
	flagPaired    = 1 << 5 // the latest three runs each had a second ping endOff after them: a missing one is flagged
	flagYoung     = 1 << 7 // the schedule was recognised from its first runs (youngConfirmed)
)

// The calendar schedule: a beet that runs like a cron job. Runs are
// clusters of at most maxRunEvents events; their starts are matched against
// a grid of slots (a period, on the wall clock for whole days) that is
// active on some days of the week (daysOn) and, for periods under a day,
// within a window of the local day (winLo-winHi). The slot is the early
// edge of the runs, so lateness is never negative and the grace, learned
// from its upper tail, only ever errs late.
//
// What it tolerates without losing the schedule: a second ping per run (a
// start and an end ping, or an occasional extra), runs skipped on days or
// hours the schedule does not cover, and a whole-hour shift of every run
// when clocks change in some zone (the beet's zone may be wrong).

// lateTail is the quantile factor of the shifted-exponential fit of
// lateness: with the slot at the early edge and mean lateness µ, a run is
// later than lateTail·µ with probability e^−lateTail (1e-4 a run).
const lateTail = 9.2

// graceFloor is the smallest grace, whatever the period.
const graceFloor = 60

// newCluster learns from a new cluster starting at t: the burst unit,
// and the schedule (a run on it, runs skipped, an extra ping, or a break).
func (m *RateModel) newCluster(t time.Time, count int) {
	sec := t.Unix()
	prevN, prevCalls, prev := m.clusterN, m.calls, m.cluster
	m.clusterN, m.calls = uint8(min(count, math.MaxUint8)), 1
	// Calls per cluster (a webhook's burst of separate requests, not a
	// count sent at once, which is many events): the unit of independent
	// counts for the CUSUMs (burst.go).
	m.learnBurst(prevCalls)
	if prevN > maxRunEvents {
		if m.flags&flagSuspended != 0 {
			// A suspended schedule resumes with a run on it, k periods
			// after the anchor (the long cluster's start). If the burst
			// opened an incident (a surge), the schedule holds from now on,
			// but the incident ends only after an hour of runs on time
			// (onSchedule), counted by the streak: so extras after every
			// run are one incident, not a surge and a recovery per run.
			m.flags &^= flagSuspended
			p := int64(m.period)
			k := max(1, (sec-prev+p/2)/p)
			if l, ok := m.lateness(prev, sec, k); ok {
				m.cluster = m.runAnchor(sec, l)
				m.setRunPings(0)
				if m.flags&(flagSurge|flagHoldDisp) != 0 {
					m.flags |= flagResumed
					m.streak = 0
				}
				return
			}
		}
		m.cluster, m.period, m.streak = sec, 0, 0 // a run pings once or twice; this is a stream of counts
		m.flags &^= flagResumed
		return
	}
	if m.period == 0 {
		m.startPeriod(prev, sec)
		return
	}
	p := int64(m.period)
	k := max(1, (sec-prev+p/2)/p)
	late, ok := m.lateness(prev, sec, k)
	if l, mok := m.monthlyCandidate(prev, sec, late); mok {
		p, k, late, ok = monthPeriod, 1, l, true
	}
	if m.secondOfMissed(prev, sec, late) {
		return
	}
	shift := int64(0)
	if p%86400 == 0 && abs(late) > 1800 {
		// A run an hour early or late, when runs are otherwise punctual,
		// or when the hour puts it in the runs' usual band (a job whose
		// runs are punctual but for a stray late one: its largest
		// lateness says nothing about the run at hand): clocks changed in
		// the zone the job follows, and the beet's zone is not that one.
		// Follow the hour, do not learn it as lateness.
		for _, h := range []int64{-3600, 3600} {
			l, sok := m.lateness(prev, sec-h, k)
			punctual := m.lateMax < 1800 && l <= max(600, 2*int64(m.lateMax))
			if sok && abs(l) < abs(late) && (punctual || m.usualLate(l)) && dstNear(m.loc, prev-86400, sec, h) {
				late, ok, shift = l, true, h
				break
			}
		}
	}
	if ok && k >= 2 && m.streak < 2 && !m.Scheduled() && !(p == 86400 && k <= 3 && (m.streak >= 1 || m.fridayToMonday(prev, k))) {
		// A gap of several periods does not confirm a new candidate (and
		// is not worth scanning); but a daily candidate seen twice goes
		// on over a weekend, or a weekday job that started on a Thursday
		// or Friday would start over every Monday and never be learned.
		// So does one seen once, on a Thursday and Friday: its Monday
		// run was taken for a new period of three days, which the next
		// runs broke again (learned only once a week began otherwise).
		ok = false
	}
	if !ok {
		m.offGrid(prev, sec, prevCalls)
		return
	}
	// Runs missing where the schedule expected them (when learned: missed
	// runs, flagged as their slots passed; they keep the schedule).
	skipped := m.skippedDays(prev, k)
	m.noteMisses(skipped)
	if skipped != 0 && !m.Scheduled() && p < 86400 {
		// Learning, and a run came after slots the schedule expected: the
		// period may be a fraction of the real one (a start and an end
		// ping a minute apart is no "every minute"). Trust it less.
		m.streak /= 2
	}
	if shift != 0 {
		m.shiftDay = int16(sec / 86400)
		if shift < 0 {
			m.shiftDay = -m.shiftDay
		}
	}
	m.countEnd(prev, prevCalls)
	m.onRun(sec, late, shift, skipped == 0)
}

// monthlyCandidate takes a run at sec, late seconds off a candidate of
// 27-32 whole days (a monthly job's first run days late made "every 29
// days"), that comes the same day of the month a calendar month after
// the latest run (give or take a day and a half) and more than half a
// day off the candidate's grid, as a run of a monthly schedule: the
// candidate becomes monthly and the run confirms it, as the third run of
// two monthly gaps would. Without it, such a job seen on the 5th of two
// consecutive months kept its day-grid candidate and was never learned.
// A job every 28 days keeps its grid (its runs are on it).
func (m *RateModel) monthlyCandidate(prev, sec, late int64) (int64, bool) {
	p := int64(m.period)
	if p%86400 != 0 || p < 27*86400 || p > 32*86400 || m.Scheduled() || abs(late) <= 43200 {
		return 0, false
	}
	l := sec - m.monthNext(prev, 1)
	if abs(l) > monthPeriod/20 || abs(l) >= abs(late) {
		return 0, false
	}
	m.period = monthPeriod
	m.daysOn = monthDay(prev, sec, m.loc)
	m.lateMean, m.lateMax = m.lateMean/60, m.lateMax/60 // minutes (lateUnit)
	return l, true
}

// usualLate reports whether a run late seconds after its slot is within
// the runs' usual band: at most 10 min early (the slot is the early edge),
// at most 3 × the mean lateness late (the 95% point of the fit, what
// calendarWords says as "usually 0-N late") or 10 min.
func (m *RateModel) usualLate(late int64) bool {
	return late >= -600 && late <= max(600, 3*int64(m.lateMean)*m.lateUnit())
}

// endRunsSure is how many runs in a row must each have come as exactly a
// start and one end ping before a missing end is flagged (an overrun):
// random extra pings near runs rarely make seven clean pairs in a row.
const endRunsSure = 7

// minEndPeriod: runs closer than this are not watched for their end. A
// cluster (a minute) is then a large share of the period, so a ping of the
// next run or an extra one joins a run's cluster as its "end" by chance,
// and a missing end is flagged no sooner than the next run would be.
const minEndPeriod = 10 * 60

// extraCount is the leaky count of extra pings (up to maxExtraCount);
// endRuns the runs in a row (up to endRunsSure) that came as a start and
// one end.
func (m *RateModel) extraCount() uint8     { return m.extraN }
func (m *RateModel) endRuns() uint8        { return m.endRunN }
func (m *RateModel) setExtraCount(n uint8) { m.extraN = min(n, maxExtraCount) }
func (m *RateModel) setEndRuns(n uint8)    { m.endRunN = min(n, endRunsSure) }

// maxExtraCount saturates extraCount (5 bits as stored).
const maxExtraCount = 31

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

// onRun takes a run at sec, late seconds after its slot (shifted by shift
// seconds): it moves the anchor, learns lateness, days and window.
func (m *RateModel) onRun(sec, late, shift int64, clean bool) {
	p, prev := int64(m.period), m.cluster
	if m.streak == 0 && p%86400 != 0 && !m.monthly() && shift == 0 && !m.Scheduled() {
		// The first match sets the interval; a slow drift after is
		// followed by the anchor (a run early moves it all the way, a run
		// late a little), so pings near a run cannot pull the period.
		gap := max(1, p+late)
		if whole := (gap + 30) / 60 * 60; whole > 0 && abs(gap-whole) <= max(2, gap/100) {
			gap = whole // cron runs whole minutes apart
		}
		if d := (gap + 43200) / 86400; d >= 1 && abs(gap-d*86400) <= d*86400/20 {
			// About whole days, as startPeriod takes them: a first run
			// off its time (the job set up by hand) made the candidate
			// "every 22 h 43 min", and the next gap "24 h 6 min" kept it
			// off the wall-clock grid a weekend is skipped on.
			gap = d * 86400
		}
		if gap = dayFraction(hourFraction(gap)); gap == 86400/2 {
			// Twice a day: a daily pair, the second run at its own time
			// (runs at 11:50 and 23:26 on a 12 h grid are each a quarter
			// of an hour off their slot, and a missed run is stated at a
			// time it never runs).
			prev := m.cluster
			m.cluster = sec
			m.pairDay(p, 0, prev, sec)
			if m.period == 86400 {
				return
			}
		}
		m.period = uint32(gap)
		late = 0
	}
	m.cluster = m.runAnchor(sec, late)
	if clean && m.streak < math.MaxUint8 {
		m.streak++
	}
	if m.confirmed() {
		m.flags &^= flagResumed
	}
	if shift == 0 {
		m.followStep(sec, late)
	}
	if late > 0 && shift == 0 {
		l := min(late/m.lateUnit(), math.MaxUint16)
		m.lateMean = uint16((7*int64(m.lateMean) + l + 4) / 8)
		m.lateMax = uint16(max(l, int64(m.lateMax)))
	}
	if p%60 != 0 && !m.monthly() && shift == 0 {
		// An interval not of whole minutes (not cron's: a loop that
		// sleeps between runs) follows runs that come later and later, or
		// earlier, a second a run.
		switch {
		case late > 2*int64(m.lateMean)+1:
			m.period++
		case late < 0:
			m.period = uint32(max(1, p-1))
		}
	}
	if m.runPings() == 0 && m.flags&flagPaired == 0 && m.endRuns() == 0 {
		m.endOff = 0 // no second ping in the last period
	}
	if m.runPings() == 0 {
		// The second run was missed (and flagged): pairs are learned again.
		m.flags &^= flagPaired
		m.pair &^= flagPairOnce
	}
	m.setRunPings(0)
	if n := m.extraCount(); n > 0 {
		m.setExtraCount(n - 1)
	}
	m.learnRun(prev, m.cluster)
	m.noteYoung() // firstruns.go
}

// stepRuns runs in a row of a whole-day schedule, each later than twice
// the mean lateness (and a minute) before the first of them, are a
// lasting move later: clocks changed in the zone the job follows (autumn,
// on a beet left at UTC, when the runs are too spread for the hour to be
// followed) or the job was moved. The slot moves to the earliest of them
// at once: followed at 1/32 a run, it stated a time before the runs'
// window for weeks, and following every late run faster cost false
// alarms (branch miss12, in the git history of docs/DETECTION.md). Lateness and grace learn these
// runs as any late runs (the grace only errs late).
const stepRuns = 3

// A whole-day schedule has no window of the day: winHi holds a pending
// step (the runs of it so far, 1 to stepRuns-1, in bits 0-1, and the
// lateness a run must pass to add to it, lateUnit/8, in bits 2-15; 0 or
// noWindow: none), winLo the least lateness of its runs from the slot
// (lateUnit).
func (m *RateModel) step() (n, lo, over int64) {
	n = int64(m.winHi & 3)
	if m.winHi == noWindow || n == 0 || n >= stepRuns {
		return 0, 0, 0
	}
	return n, int64(m.winLo), int64(m.winHi>>2) * 8
}

// followStep takes a run at sec, late seconds after its slot (late > 0,
// not a followed clock change), as a run of a step if it is one, and
// moves the slot to the step's earliest run at its stepRuns-th. The
// anchor has moved as for any late run (runAnchor).
func (m *RateModel) followStep(sec, late int64) {
	if m.period%86400 != 0 && !m.monthly() {
		return
	}
	u := m.lateUnit()
	l := late / u
	n, lo, over := m.step()
	if n == 0 {
		over = max(2*int64(m.lateMean), graceFloor/u) // before this run is learned
		lo = l
	}
	m.winLo, m.winHi = noWindow, noWindow
	if l <= over || over/8 >= 1<<14 {
		return
	}
	lo, n = min(lo, l), n+1
	if slot := sec - late; n >= stepRuns {
		m.cluster = max(m.cluster, slot+lo*u)
		return
	}
	creep := (m.cluster - (sec - late)) / u
	m.winLo, m.winHi = uint16(min(lo-creep, math.MaxUint16)), uint16(over/8<<2|n)
}

// runAnchor is the slot a run at sec, late seconds after its slot,
// leaves as the schedule's phase: an early run moves it half the way (the slot drifts to the early edge of runs, and a ping just before
// a slot, taken for its run, cannot move the phase much), a late one a
// little (the edge drifts).
func (m *RateModel) runAnchor(sec, late int64) int64 {
	if late < 0 {
		return sec - late + late/2
	}
	return sec - late + late/32
}

// offGrid handles a cluster that is not a run on the grid: a second ping
// of the run (free once a period), an extra, or a new candidate period.
//
// calls is the number of calls in the cluster before this one.
func (m *RateModel) offGrid(prev, sec int64, calls uint8) {
	p := int64(m.period)
	gap := sec - prev
	if p%86400 == 0 {
		gap = wallGap(prev, sec, m.loc) // a second run of the day keeps its wall-clock time
	}
	// (An early run moves the anchor half way to it, so its second ping
	// may come before the anchor: it is still the run's.)
	// The second run of a learned pair may come past half a period when
	// the first was early: at its usual offset, it is still the second.
	usual := p%86400 == 0 && m.flags&flagPaired != 0 && abs(gap-int64(m.endOff)) <= m.tolerance() && gap < p-m.tolerance()
	if m.runPings() == 0 && (gap < p/2 || usual) && sec > prev-m.tolerance() {
		// A start and an end ping, or an occasional extra: neither a run
		// nor a break.
		m.setRunPings(1)
		if calls == 1 && gap > 0 && p >= minEndPeriod && (gap < p/4 || m.endRuns() >= endRunsSure && !usual) {
			// The end of a run that came as its start alone (a late end,
			// once ends are known, still is one and widens endOff).
			m.noteEnd(gap)
			return
		}
		m.setEndRuns(0)
		off := min(max(gap, 1), math.MaxUint16)
		// A second ping at the same offset as the last two runs' (within
		// a minute or a quarter): a pair of runs or a start and an end
		// (secondDue), not an extra ping at random.
		switch {
		case m.endOff == 0 || abs(off-int64(m.endOff)) > max(60, int64(m.endOff)/4):
			m.flags &^= flagPaired
			m.pair &^= flagPairOnce
		case m.pair&flagPairOnce != 0:
			m.flags |= flagPaired
		default:
			m.pair |= flagPairOnce
		}
		m.endOff = uint16(off)
		return
	}
	if m.Scheduled() && sec > m.slotFrom(prev, 1)+m.tolerance() && m.expectedSlot(m.slotFrom(prev, 1)) {
		// The slot after the latest run passed with no run, and this one
		// is off the grid: the job moved. Follow it at once (its slots are
		// flagged no more); it is confirmed again after scheduleStreak runs
		// at the new time, or a new period is learned.
		m.streak, m.cluster, m.extraN, m.endRunN = 0, sec, 0, 0 // extra pings and ends counted afresh
		m.flags &^= flagResumed
		m.setRunPings(0)
		return
	}
	if m.Scheduled() || m.streak >= 2 {
		// More than one extra in a period, again and again: a learned
		// schedule runs too often, a candidate is dropped.
		m.setEndRuns(0) // a third ping: no start+end pair
		n := m.extraCount() + 4
		m.setExtraCount(n)
		switch {
		case n < tooOftenExtras:
			return
		case m.Scheduled():
			if n-4 < tooOftenExtras {
				// The extra runs persist: the job runs too often (flagged
				// in detect.go), and the schedule keeps. The count goes to
				// its top, so the incident ends only after about 30 runs
				// came alone (incidentOver), not at every lull.
				m.tooOften = true
				m.setExtraCount(31)
			}
			return
		}
		m.setExtraCount(0)
	}
	m.startPeriod(prev, sec)
}

// The pair bits: the latest run's second ping came (pairRunPings, read
// as runPings), a second ping repeated the offset before it once
// (flagPairOnce).
const (
	pairRunPings = 1
	flagPairOnce = 2
)

func (m *RateModel) runPings() uint8     { return m.pair & pairRunPings }
func (m *RateModel) setRunPings(n uint8) { m.pair = m.pair&^pairRunPings | n }

// startPeriod takes the gap from prev to now as the candidate period. A
// gap of about whole days on the wall clock is taken as whole days, so a
// daily job is matched on the wall clock across DST.
func (m *RateModel) startPeriod(prev, now int64) {
	defer m.pairDay(int64(m.period), m.streak, prev, now)
	p := now - prev
	w := wallGap(prev, now, m.loc)
	if k := (w + 43200) / 86400; k >= 1 && abs(w-k*86400) <= k*86400/20 {
		p = k * 86400
	}
	if k := p / 86400; k >= 27 && k <= 32 && abs(now-m.monthNext(prev, 1)) <= monthPeriod/20 {
		p = monthPeriod // the same day of the next month, give or take a day and a half
	}
	m.cluster = now
	day, _ := m.localDay(now)
	m.calDay = uint16(day)
	m.period, m.streak, m.lateMean, m.lateMax = uint32(min(max(p, 1), math.MaxUint32)), 0, 0, 0
	m.daysOn, m.daysMissed, m.winLo, m.winHi, m.endOff, m.extraN, m.endRunN = 0, 0, noWindow, noWindow, 0, 0, 0
	m.setRunPings(0)
	m.flags &^= flagResumed | flagYoung
	if m.period == monthPeriod {
		m.daysOn = monthDay(prev, now, m.loc)
	}
	if pd, _ := m.localDay(prev); p == 3*86400 && weekday(pd) == 5 {
		// A run on a Friday and the next on Monday: a daily job that
		// skipped the weekend, not one every three days, whose next
		// runs (a day apart) broke it into 2- and 3-day candidates
		// for weeks (a weekday job first seen on a Friday was confirmed
		// after about 12 days). The weekend's two slots were missed, and
		// the calendar starts on the Friday, so that they are known off
		// once confirmed.
		m.period, m.calDay = 86400, uint16(pd)
		m.noteMisses(1<<0 | 1<<6)
	}
	m.learnCalendar(now)
}

// pairDay: a candidate period p0 (the gap before prev, seen once)
// followed by a gap to now that makes up a day with it is a job that runs
// twice a day (or pings at its start and end): a daily schedule whose runs
// have a second one, at the shorter of the two gaps.
func (m *RateModel) pairDay(p0 int64, streak uint8, prev, now int64) {
	g := now - prev
	if streak != 0 || p0 <= 0 || p0 >= 86400 || g >= 86400 || abs(wallGap(prev-p0, now, m.loc)-86400) > 86400/20 {
		return
	}
	m.period = 86400
	m.winLo, m.winHi = noWindow, noWindow // a daily schedule has no window (step)
	if g < p0 {
		// prev was the day's first run, now is its second.
		m.cluster = prev
		m.setRunPings(1)
		m.endOff = uint16(min(wallGap(prev, now, m.loc), math.MaxUint16))
	} else {
		// now is the first run a day after the one before prev.
		m.endOff = uint16(min(wallGap(prev-p0, prev, m.loc), math.MaxUint16))
		m.streak = 1
	}
	day, _ := m.localDay(m.cluster)
	m.calDay = uint16(day)
	m.daysOn = 0
	m.learnCalendar(m.cluster)
}

// dayFraction takes an interval of 2 to 12 hours that is within 5% of a
// whole fraction of a day (12, 8, 6, 4, 3 or 2 hours) as that fraction: a
// job run twice a day at two times not quite 12 h apart, with lateness,
// averages to "every 12 h 18 min" over its first two gaps, and a period
// that is not a divisor of the day drifts off its runs within days.
func dayFraction(gap int64) int64 {
	for _, k := range []int64{2, 3, 4, 6, 8, 12} {
		if f := 86400 / k; abs(gap-f) <= f/20 {
			return f
		}
	}
	return gap
}

// hourFraction takes an interval within 5% of an hour or a whole fraction
// of one (30, 20, 15, 12, 10, 6, 5, 4, 3, 2 or 1 minutes) as that: the
// first runs of a job that runs for a varying minute or two set its
// interval ("every 1 h 1 min"), which would drift off its runs within a
// day, and a schedule is now recognised from its first runs.
func hourFraction(gap int64) int64 {
	for _, k := range []int64{1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60} {
		if f := 3600 / k; abs(gap-f) <= f/20 {
			return f
		}
	}
	return gap
}

// lateness is how much later than k periods after the anchor prev a run
// at now came (negative: early), in real time or, for whole days, on the
// wall clock, whichever is nearer; ok if early by at most a tenth of the
// period, and late by at most that or the grace.
func (m *RateModel) lateness(prev, now, k int64) (int64, bool) {
	p := int64(m.period)
	late := now - (prev + k*p)
	if m.monthly() {
		late = now - m.monthNext(prev, k)
	}
	if p%86400 == 0 {
		if w := now - m.wallNext(prev, k*p/86400); abs(w) < abs(late) {
			late = w
		}
	}
	tol := max(30, p/10)
	if m.monthly() && !m.Scheduled() {
		tol = p / 20 // learned from three runs: on the same day, give or take a day and a half
	}
	if m.Scheduled() {
		// Up to half a period late is a late run: flagged as missed when
		// its grace passed, it still widens the grace when it comes.
		return late, late >= -tol && late < max(m.tolerance(), p/2)
	}
	return late, abs(late) <= tol
}

// noWindow marks a window of the day not learned yet.
const noWindow = math.MaxUint16

// learnCalendar marks the day of a run at slot as one the schedule runs on
// and, for periods under a day, widens the window of the day to it.
func (m *RateModel) learnCalendar(slot int64) {
	p := int64(m.period)
	if p > 86400 || p == 0 {
		return
	}
	day, sod := m.localDay(slot)
	bit := uint8(1) << weekday(day)
	m.daysOn |= bit
	m.daysMissed &^= bit
	if p < 86400 {
		minute := uint16(sod / 60)
		if m.winLo == noWindow {
			m.winLo, m.winHi = minute, minute
		}
		m.winLo, m.winHi = min(m.winLo, minute), max(m.winHi, minute)
	}
}

// expectedSlot reports whether the schedule expects a run at slot t: on a
// day it runs on and, for periods under a day, within its window.
//
// Days and hours are known only once seen: a day of the week is off when
// no run came on it since the schedule was learned, once such a day has
// passed whole; the window applies once a whole day has passed.
func (m *RateModel) expectedSlot(t int64) bool {
	p := int64(m.period)
	if p > 86400 {
		return true
	}
	day, sod := m.localDay(t)
	seen := day - int64(m.calDay) - 1 // whole days since the schedule started
	if wd := weekday(day); m.daysOn&(1<<wd) == 0 && seen >= (wd-weekday(int64(m.calDay)+1)+7)%7+1 {
		return false
	}
	return seen < 1 || m.inWindow(sod)
}

// inWindow reports whether a slot sod seconds into its local day is within
// the learned window of the day (give or take a 120th of the period), or
// no window is learned.
func (m *RateModel) inWindow(sod int64) bool {
	p := int64(m.period)
	if p >= 86400 || m.winLo == noWindow {
		return true
	}
	minute, margin := sod/60, max(1, p/120)
	return minute+margin >= int64(m.winLo) && minute <= int64(m.winHi)+margin
}

// learnRun learns the calendar from a run at slot, the run before it at
// prev. Once the window of the day applies, a run outside it widens it
// only next to another run (one slot before or after it): one stray run
// in the evening, a late run that ends an outage or an extra ping on the
// grid, must not move the end of the working day (each day's slots up to
// it would be flagged as missed), while a job whose hours grew, or a
// day's first run the window missed, is learned once the next run follows.
func (m *RateModel) learnRun(prev, slot int64) {
	p := int64(m.period)
	if p < 86400 && abs(slot-prev-p) <= p/2 {
		m.learnCalendar(prev)
	} else if day, sod := m.localDay(slot); day-int64(m.calDay) > 1 && !m.inWindow(sod) {
		return
	}
	m.learnCalendar(slot)
}

// calendarWeek reports whether the schedule has been learned for a whole
// week, so that its days and window are known.
func (m *RateModel) calendarWeek() bool {
	day, _ := m.localDay(m.last / 1e6)
	return day-int64(m.calDay) >= 8
}

// fridayToMonday reports whether the k-th daily slot after prev, a run on
// a Friday, is the Monday after it.
func (m *RateModel) fridayToMonday(prev, k int64) bool {
	day, _ := m.localDay(prev)
	return k == 3 && weekday(day) == 5
}

// weekdayMask is Monday to Friday (bit 0 Sunday).
const weekdayMask = 0b0111110

// weekdayStreak is how many clean runs in a row, besides its days, a
// weekday job needs to be confirmed by weekdaysLearned.
const weekdayStreak = 3

// weekdaysLearned reports whether a daily schedule is known to be a
// weekday job: a run came on every day Monday to Friday, none on the
// weekend, whose Saturday and Sunday were each missed, and the runs of
// the week kept the slot. Its days are then as known as after the
// scheduleStreak runs and the week calendarWeek wants, which come only
// in the job's second or third week (a run missed before was never
// flagged: branch wkconfirm, in the git history of docs/DETECTION.md). A daily job that missed a
// Saturday still had its Sunday run; one that missed a whole weekend
// (an outage) is taken for a weekday job until its next weekend run,
// which is on the grid and adds its day: nothing is flagged wrongly,
// only its weekend runs are not watched until then.
func (m *RateModel) weekdaysLearned() bool {
	return m.period == 86400 && m.daysOn == weekdayMask && m.daysMissed&^weekdayMask == 0b1000001 && m.streak >= weekdayStreak
}

// maxSlotScan bounds the slots looked at to skip those the schedule does
// not expect (a weekend of a 5-minute job is 576).
const maxSlotScan = 4096

// skippedDays returns the days of the week (a bit each) on which a slot
// the schedule expected lies between the anchor prev and its k-th slot.
func (m *RateModel) skippedDays(prev int64, k int64) uint8 {
	var days uint8
	for j := int64(1); j < min(k, maxSlotScan); j++ {
		if s := m.slotFrom(prev, j); m.expectedSlot(s) {
			day, _ := m.localDay(s)
			days |= 1 << weekday(day)
		}
	}
	return days
}

// noteMisses learns from runs missing on days: a day missed twice in a
// row with no run on it between is not a day the schedule runs on.
func (m *RateModel) noteMisses(days uint8) {
	if m.monthly() {
		return // daysOn holds the day of the month (monthDay)
	}
	again := days & m.daysMissed
	m.daysOn &^= again
	m.daysMissed = m.daysMissed&^again | days&^again
}

// localDay returns the local day number (days since 1970-01-01 on the
// wall clock) and second of that day of an instant.
func (m *RateModel) localDay(unix int64) (day, sod int64) {
	if unix < m.zone.start || unix >= m.zone.end {
		m.zone = zoneAt(unix, m.loc)
	}
	local := unix + m.zone.off
	day = local / 86400
	if local < 0 && local%86400 != 0 {
		day--
	}
	return day, local - day*86400
}

// weekday of a local day number: 0 Sunday … 6 Saturday (1970-01-01 was a Thursday).
func weekday(day int64) int64 { return ((day+4)%7 + 7) % 7 }

// wallNext is the same wall-clock time as t, days later.
func (m *RateModel) wallNext(t, days int64) int64 {
	c := time.Unix(t, 0).In(m.loc)
	return time.Date(c.Year(), c.Month(), c.Day()+int(days), c.Hour(), c.Minute(), c.Second(), 0, m.loc).Unix()
}

// wallGap is the difference of two instants' local wall-clock readings.
func wallGap(a, b int64, loc *time.Location) int64 {
	_, oa := time.Unix(a, 0).In(loc).Zone()
	_, ob := time.Unix(b, 0).In(loc).Zone()
	return (b + int64(ob)) - (a + int64(oa))
}

// tolerance is the grace: how late a run may be before it counts as
// missed. It only ever errs late: at least graceFloor and a tenth of the
// period, at least a quarter more than the latest run seen (a late run
// that came widens it, and it never shrinks below that), and at least the
// 1-in-10,000 quantile of a shifted-exponential fit of lateness. At most
// half a period, so a slot's window never reaches the next.
func (m *RateModel) tolerance() int64 {
	p := int64(m.period)
	u := m.lateUnit()
	g := max(graceFloor, p/10, int64(m.lateMax)*u*5/4, int64(lateTail*float64(m.lateMean))*u)
	return min(g, max(graceFloor, p/2))
}

// NextRun returns when the next scheduled run is due (before grace): the
// first slot the schedule expects after the latest run that no event has
// answered yet. An event within a slot's window (its grace either side,
// at most half a period) is that slot's run, even one inside a longer
// cluster (extra pings, a job also started by hand), and a slot whose
// window the last event is past was settled already (flagged when its
// deadline passed), so the deadline is always after the last event: an
// event never brings a passed slot back.
func (m *RateModel) NextRun() time.Time {
	p := int64(m.period)
	if p <= 0 {
		return time.Unix(m.cluster, 0) // no schedule
	}
	// Slots up to after are answered or past.
	after := m.last/1e6 + min(m.tolerance(), p/2)
	k0 := max(1, (after-m.cluster)/p)
	for k := k0; ; k++ {
		if next := m.slot(k); next > after && (m.watchedSlot(next) || k-k0 > maxSlotScan) {
			return time.Unix(next, 0)
		}
	}
}

// slot is the k-th scheduled run after the latest run's (smoothed) time.
func (m *RateModel) slot(k int64) int64 { return m.slotFrom(m.cluster, k) }

func (m *RateModel) slotFrom(anchor, k int64) int64 {
	p := int64(m.period)
	if m.monthly() {
		return m.monthNext(anchor, k)
	}
	next := anchor + k*p
	if p%86400 == 0 {
		// The same wall-clock time k·p/86400 days later, or later if DST
		// made real time the longer one.
		next = max(next, m.wallNext(anchor, k*p/86400))
	}
	return next
}

// Grace is how long after NextRun a missing run is flagged.
func (m *RateModel) Grace() time.Duration { return time.Duration(m.tolerance()) * time.Second }

// calendar is the schedule's watch: a missed run.
type calendar struct{ m *RateModel }

func (w calendar) ready() bool { return w.m.Scheduled() }

func (w calendar) due(bool) (time.Time, string, bool) {
	due := w.m.NextRun().Add(w.m.Grace())
	if at, ok := w.m.secondDue(); ok && at.Before(due) {
		return at, kindMissedSecond, true
	}
	return due, kindMissedRun, true
}

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
	case m.flags&flagPaired != 0 && off >= p/4 && p%86400 == 0:
		at = time.Unix(m.secondSlot()+m.tolerance(), 0)
	case m.endRuns() >= endRunsSure && m.calls < 2: // a second call within the run's cluster was its end
		at = time.Unix(m.cluster+m.overrunAfter(), 0)
	default:
		return time.Time{}, false
	}
	return at, at.UnixMicro() > m.last
}

// overrunAfter is how long after its slot a run of a start+end job is
// overdue without its end: twice the longest run of the streak, at least
// a quarter period and graceFloor more than that longest run.
func (m *RateModel) overrunAfter() int64 {
	off := int64(m.endOff)
	return max(int64(m.period)/4, 2*off, off+graceFloor)
}

// secondOfMissed takes a cluster at sec that is the second run of a day
// whose first run is missing (flagged as its grace passed) for what it
// is, rather than a very late first run: the anchor moves to the missed
// run's slot, and lateness learns nothing.
func (m *RateModel) secondOfMissed(prev, sec, late int64) bool {
	p := int64(m.period)
	if p != 86400 || m.flags&flagPaired == 0 || !m.Scheduled() {
		return false
	}
	off := int64(m.endOff)
	k := max(1, (sec-off-prev+p/2)/p)
	slot := m.slotFrom(prev, k)
	d := sec - (slot + off)
	if abs(d) >= abs(late) || d < -m.tolerance() || d > m.tolerance() {
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

func (w calendar) alarm(kind string, due time.Time) *alarm {
	m := w.m
	if kind == kindMissedSecond && m.endRuns() >= endRunsSure {
		start := time.Unix(m.cluster, 0)
		return &alarm{kind: beet.FlipOverrun, expected: 1, reason: fmt.Sprintf("The run that started at %s has not reported its end by %s; the longest run of the last %d ended %s after its start (%s).",
			start.In(m.loc).Format("Jan 2 15:04 MST"), due.In(m.loc).Format("15:04"), endRunsSure, Duration(time.Duration(m.endOff)*time.Second), m.describeSchedule())}
	}
	if kind == kindMissedSecond {
		slot := time.Unix(m.secondSlot(), 0)
		return &alarm{kind: beet.FlipMissedRun, expected: 1, reason: fmt.Sprintf("Missed the second run of the day due at %s: no event by %s (%s).",
			slot.In(m.loc).Format("Jan 2 15:04 MST"), due.In(m.loc).Format("15:04"), m.describeSchedule())}
	}
	slot := m.NextRun()
	return &alarm{kind: beet.FlipMissedRun, expected: 1, reason: fmt.Sprintf("Missed the run due at %s: no event by %s (%s).",
		slot.In(m.loc).Format("Jan 2 15:04 MST"), due.In(m.loc).Format("15:04"), m.describeSchedule())}
}

func (w calendar) describe(time.Time) string { return w.m.describeSchedule() }

func (m *RateModel) describeSchedule() string {
	words, _ := m.calendarWords()
	return words + "; a missed run is flagged " + Duration(m.Grace()) + " after its time"
}

// calendarWords says the schedule in words ("weekdays at 06:30
// Europe/Berlin, usually 0-3 min late") and as the equivalent cron line in
// the beet's zone ("30 6 * * 1-5"; empty when cron cannot say it).
func (m *RateModel) calendarWords() (words, cron string) {
	p := int64(m.period)
	at := time.Unix(m.cluster+10, 0).In(m.loc) // the slot's minute (runs come late, not early)
	hh, mm := at.Hour(), at.Minute()
	days, dow := daysWords(m.daysOn)
	young := !m.calendarKnown()
	if young && p <= 86400 {
		// Days not known yet: what is watched (watchedSlot), weekdays
		// and any weekend day a run came on.
		days, dow = daysWords(m.daysOn | weekdayMask)
		if m.daysOn&^weekdayMask == 0 {
			days += " (weekends not seen yet)"
		}
	}
	zone := m.loc.String()
	switch {
	case m.monthly() && m.daysOn == 31:
		words = fmt.Sprintf("monthly on the last day at %02d:%02d %s", hh, mm, zone)
	case m.monthly():
		day := at.Day()
		if m.daysOn > 28 {
			day = int(m.daysOn)
		}
		words = fmt.Sprintf("monthly on the %s at %02d:%02d %s", schedule.Ordinal(day), hh, mm, zone)
		if day <= 28 { // cron runs a later day only in the months that have it
			cron = fmt.Sprintf("%d %d %d * *", mm, hh, at.Day())
		}
	case p == 86400:
		words = fmt.Sprintf("%s at %02d:%02d %s", days, hh, mm, zone)
		cron = fmt.Sprintf("%d %d * * %s", mm, hh, dow)
	case p%86400 == 0:
		words = fmt.Sprintf("every %d days at %02d:%02d %s", p/86400, hh, mm, zone)
	default:
		step := (p + 30) / 60 // minutes
		switch {
		case p < 600 && p%60 != 0:
			words = fmt.Sprintf("every %ds", p)
		case p < 600:
			words = "every " + Duration(time.Duration(p)*time.Second)
		case step == 60:
			words = fmt.Sprintf("every hour at :%02d", mm)
		case step%60 == 0:
			words = fmt.Sprintf("every %d h at :%02d", step/60, mm)
		default:
			words = "every " + Duration(time.Duration(step)*time.Minute)
		}
		hours, window := "*", m.winLo != noWindow && int64(m.winHi-m.winLo)+step < 1440 && !young
		if window {
			words += fmt.Sprintf(" from %02d:%02d to %02d:%02d", m.winLo/60, m.winLo%60, m.winHi/60, m.winHi%60)
			hours = fmt.Sprintf("%d-%d", m.winLo/60, m.winHi/60)
		}
		if young || m.daysOn != 0 && m.daysOn&0x7F != 0x7F {
			words += " " + days
		}
		words += " " + zone
		if abs(p-step*60) <= 2 {
			switch {
			case step < 60 && 60%step == 0:
				cron = fmt.Sprintf("%d-59/%d %s * * %s", mm%int(step), step, hours, dow)
				if mm%int(step) == 0 {
					cron = fmt.Sprintf("*/%d %s * * %s", step, hours, dow)
				}
				if step == 1 {
					cron = fmt.Sprintf("* %s * * %s", hours, dow)
				}
			case step%60 == 0 && 24%(step/60) == 0:
				n := int(step / 60)
				if !window && n > 1 {
					hours = fmt.Sprintf("%d-23/%d", hh%n, n)
				} else if n > 1 {
					hours += fmt.Sprintf("/%d", n)
				}
				cron = fmt.Sprintf("%d %s * * %s", mm, hours, dow)
			}
		}
	}
	words = "runs " + words
	if late := 3 * int64(m.lateMean) * m.lateUnit(); late > 0 {
		words += ", usually " + lateWords(late) + " late"
	} else {
		words += ", on time"
	}
	switch {
	case m.endRuns() >= endRunsSure:
		words += ", with an end ping at most " + Duration(time.Duration(m.endOff)*time.Second) + " after each start"
	case m.endOff > 0:
		words += ", with a second ping about " + Duration(time.Duration(m.endOff)*time.Second) + " after each run"
	}
	return words, cron
}

// lateWords writes seconds for "usually 0-… late".
func lateWords(s int64) string {
	if s < 60 {
		return fmt.Sprintf("0-%ds", s)
	}
	return "0-" + Duration(time.Duration(s)*time.Second)
}

// daysWords says a set of days of the week in words and as cron's
// day-of-week field.
func daysWords(mask uint8) (words, field string) {
	switch mask & 0x7F {
	case 0, 0x7F:
		return "every day", "*"
	case 0x3E:
		return "weekdays", "1-5"
	case 0x41:
		return "weekends", "0,6"
	}
	names := []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	var ws, fs []string
	for d := range 7 {
		if mask&(1<<d) != 0 {
			ws, fs = append(ws, names[d]), append(fs, fmt.Sprint(d))
		}
	}
	return "on " + strings.Join(ws, ", "), strings.Join(fs, ",")
}

// monthPeriod is the period of a monthly schedule (an average Gregorian
// month): its slots are on the same day of the month at the same
// wall-clock time (monthNext). No other period takes this value: a gap of
// about a month is whole days on the wall clock.
const monthPeriod = 2629746

// monthStreak: a monthly schedule is confirmed by three runs (two gaps of
// a calendar month, give or take a day and a half), the least the judge's
// oracle calls a pattern; waiting for seven would take half a year.
const monthStreak = 1

// monthly reports whether the schedule runs once a month.
func (m *RateModel) monthly() bool { return m.period == monthPeriod }

// lateUnit is the unit of lateMean and lateMax in seconds: minutes for a
// monthly schedule, whose runs may come a day or more late (16 bits of
// seconds end at 18 h), else seconds.
func (m *RateModel) lateUnit() int64 {
	if m.monthly() {
		return 60
	}
	return 1
}

// monthNext is the same day of the month and wall-clock time as t, months
// later; a day the month does not have is its last day.
func (m *RateModel) monthNext(t, months int64) int64 {
	c := time.Unix(t, 0).In(m.loc)
	y, mo, d := c.Date()
	if m.monthly() && m.daysOn > 28 {
		d = int(m.daysOn) // the 29th, 30th or 31st (the last day): not the day a shorter month clamped the anchor to
	}
	last := time.Date(y, mo+time.Month(months)+1, 0, 12, 0, 0, 0, m.loc).Day()
	return time.Date(y, mo+time.Month(months), min(d, last), c.Hour(), c.Minute(), c.Second(), 0, m.loc).Unix()
}
