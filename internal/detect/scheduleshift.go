package detect

import (
	"math"
)

// Following a schedule's runs when they move later: a whole-hour shift
// (a clock change in some zone, when the beet's zone may be wrong), or a
// job moved to a later time.

// stepRuns runs in a row, each later than twice the mean lateness before
// the first of them (and a minute; under a day, a tenth of the period),
// are a lasting move later: clocks changed in the zone the job follows
// (autumn, on a beet left at UTC, when the runs are too spread for the
// hour to be followed) or the job was moved. The slot moves to the
// earliest of them at once: followed at 1/32 a run, it stated a time
// before the runs' window for weeks, and following every late run faster
// cost false alarms (branch miss12, in the git history of
// docs/DETECTION.md). If the runs were as close together as runs came
// before, their lateness by the old slot is taken back.
const stepRuns = 3

// A pending step: the runs of it so far (1 to stepRuns-1), the least
// lateness of its runs from the slot (lateUnit) and the lateness a run
// must pass to add to it. A whole-day schedule has no window of the day:
// winHi holds n in bits 0-1 and that bound, lateUnit/8, in bits 2-15,
// winLo the least lateness (noWindow: none). A shorter period has no
// whole-hour shift: shiftDay holds n in bits 0-1 and the least lateness,
// in 2 s, in bits 2-15; its bound is not stored (0: none).
func (m *RateModel) step() (n, lo, over int64) {
	if !m.wholeDays() {
		raw := uint16(m.shiftDay)
		if n = int64(raw & 3); n == 0 || n >= stepRuns {
			return 0, 0, 0
		}
		return n, int64(raw>>2) * 2, m.stepOver()
	}
	n = int64(m.winHi & 3)
	if m.winHi == noWindow || n == 0 || n >= stepRuns {
		return 0, 0, 0
	}
	return n, int64(m.winLo), int64(m.winHi>>2) * 8
}

// setStep stores a pending step (n 0: none).
func (m *RateModel) setStep(n, lo, over int64) {
	switch {
	case !m.wholeDays():
		m.shiftDay = 0
		if n > 0 {
			m.shiftDay = int16(uint16(min(max(lo, 0)/2, 1<<14-1)<<2 | n))
		}
	case n == 0:
		m.winLo, m.winHi = noWindow, noWindow
	default:
		m.winLo, m.winHi = uint16(min(max(lo, 0), math.MaxUint16)), uint16(over/8<<2|n)
	}
}

// wholeDays reports whether the period is whole days or a month (or
// none yet).
func (m *RateModel) wholeDays() bool { return m.period%86400 == 0 || m.monthly() }

// followedShift reports whether the whole-day schedule followed a
// whole-hour shift of its runs (shiftDay): the job keeps another zone's
// clock than the beet's (SuggestedZone, pairSlack, offGrid's pair offset).
// Under a day shiftDay holds a pending step instead.
func (m *RateModel) followedShift() bool { return m.shiftDay != 0 && m.wholeDays() }

// keepShiftDay clears shiftDay when the period went from whole days to
// less or back (whole: before): it holds a followed shift's day on whole
// days, a pending step under a day, and neither means the other.
func (m *RateModel) keepShiftDay(whole bool) {
	if m.wholeDays() != whole {
		m.shiftDay = 0
	}
}

// delayedAtRandom reports whether the schedule's runs are delayed at
// random over hours (systemd's RandomizedDelaySec): a start+end job's
// starts (delayedStarts), or runs late by more than 45 min on average (a
// uniform span's mean is half its width, so a span over pairGrace; not
// the largest lateness, a stray late run's of a punctual job or a move's
// before it was taken back). No clock change or step is read from them.
func (m *RateModel) delayedAtRandom() bool {
	return m.delayedStarts(int64(m.lateMax)) || 2*int64(m.lateMean)*m.lateUnit() > pairGrace
}

// stepOver is the lateness a run must pass to start a step: twice the
// mean lateness, at least a minute, and under a day at least a tenth of
// the period (the grace's floor: an hourly job's slow runs come now and
// then, three in a row past 6 min only when it moved).
func (m *RateModel) stepOver() int64 {
	over := max(2*int64(m.lateMean), graceFloor/m.lateUnit())
	if !m.wholeDays() {
		over = max(over, int64(m.period)/10)
	}
	return over
}

// followStep takes a run at sec, late seconds after its slot (not a
// followed clock change), as a run of a step if it is one, and at its
// stepRuns-th moves the slot to the step's earliest run (under a day only
// for a clear move). The anchor has moved as for any late run
// (runAnchor). It returns the run's lateness by the slot it leaves.
func (m *RateModel) followStep(sec, late int64) int64 {
	u := m.lateUnit()
	l := late / u
	n, lo, over := m.step()
	if n > 0 && 8*lo < l {
		n = 0 // far later than the pending step's runs (hours after minutes): a step of its own
	}
	if n == 0 {
		over = m.stepOver() // before this run is learned
		lo = l
	}
	m.setStep(0, 0, 0)
	if l <= over || over/8 >= 1<<14 {
		return late
	}
	lo, n = min(lo, l), n+1
	if slot := sec - late; n >= stepRuns {
		mean := m.meanBeforeStep(lo, over)
		hi := max(int64(m.lateMax), l)
		// Runs spread over hours (a delay at random), or within the tail
		// of the lateness learned before (three slow runs of a daily
		// pair, whose grace then goes by its lateness): no clear move.
		// Under a day such runs leave the slot too: slots under a day
		// follow late runs at 1/32 a run, and only a clear move faster.
		// So do runs delayed at random (delayedAtRandom): three in the
		// top of their span
		// come now and then, and the slot moved to them took the next
		// early run for one hours early. A daily job delayed by up to 8 h
		// had its slot moved from 06:55 to 11:31, then dropped at a run at
		// 07:07, and was left to the rates for good: its missed run never
		// flagged (TestDelayedDailyJobKeepsItsSlot).
		moved := hi-lo <= max(over, lo/8) && float64(lo) > lateTail*float64(mean)
		if moved || m.wholeDays() && !m.delayedAtRandom() {
			m.cluster = max(m.cluster, slot+lo*u)
		}
		if !moved {
			return late
		}
		// The step's runs, as close together as the runs were before
		// it, were learned as late by hours; by the new slot they are
		// late by their spread. Kept, a job moved 5 h later got 1.25 ×
		// 5 h of grace for good (9 h to flag a stop the oracle flags in
		// 2 h), an hourly job moved 20 min 25 min. The mean goes back to
		// what it was before the step, every lateness seen moves by the
		// step.
		m.lateMean = uint16(mean)
		// lateMax also says whether a first ping ever came over startLate
		// late (then it is no start ping, startend.go): taking the step
		// back must not make a start of it.
		m.setLateNext(max(0, m.lateSecond()-lo))
		m.lateMax = uint16(max(int64(m.lateMax)-lo, int64(m.lateMean), min(int64(m.lateMax), startLate/u+1)))
		return late - lo*u
	}
	creep := (m.cluster - (sec - late)) / u
	m.setStep(n, lo-creep, over)
	return late
}

// meanBeforeStep is the mean lateness before the step's first two runs
// (each at least lo late) were learned: over/2 on whole days, where over
// was twice it (or the floor) before them; else the two EWMA steps undone,
// taking each run as lo late (the mean it gives errs high).
func (m *RateModel) meanBeforeStep(lo, over int64) int64 {
	mean := int64(m.lateMean)
	if m.wholeDays() {
		return min(mean, over/2)
	}
	w := min(lateRuns, max(2, int64(m.streak)-1))
	for range stepRuns - 1 {
		mean = max(0, min(mean, (w*mean-lo)/(w-1)))
	}
	return mean
}
