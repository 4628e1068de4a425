package detect

import (
	"math"
)

// Following a whole-hour shift of a schedule's runs (a clock change in
// some zone, when the beet's zone may be wrong).

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
// anchor has moved as for any late run (runAnchor). It returns the run's
// lateness by the slot it leaves.
func (m *RateModel) followStep(sec, late int64) int64 {
	if m.period%86400 != 0 && !m.monthly() {
		return late
	}
	u := m.lateUnit()
	l := late / u
	n, lo, over := m.step()
	if n > 0 && 8*lo < l {
		n = 0 // hours later than a pending step of minutes: a step of its own
	}
	if n == 0 {
		over = max(2*int64(m.lateMean), graceFloor/u) // before this run is learned
		lo = l
	}
	m.winLo, m.winHi = noWindow, noWindow
	if l <= over || over/8 >= 1<<14 {
		return late
	}
	lo, n = min(lo, l), n+1
	if slot := sec - late; n >= stepRuns {
		m.cluster = max(m.cluster, slot+lo*u)
		if hi := max(int64(m.lateMax), l); hi-lo > max(over, lo/8) {
			return late // runs spread over hours (a delay at random), not a job moved
		}
		// The step's runs, as close together as the runs were before
		// it, were learned as late by hours; by the new slot they are
		// late by their spread. Kept, a job moved 5 h later got 1.25 ×
		// 5 h of grace for good (9 h to flag a stop the oracle flags in
		// 2 h). The mean goes back to what it was before the step (over
		// is twice it, or the floor), every lateness seen moves by the
		// step.
		m.lateMean = uint16(min(int64(m.lateMean), over/2))
		m.lateMax = uint16(max(int64(m.lateMax)-lo, int64(m.lateMean), min(int64(m.lateMax), startLate/u+1)))
		return late - lo*u
	}
	creep := (m.cluster - (sec - late)) / u
	m.winLo, m.winHi = uint16(min(lo-creep, math.MaxUint16)), uint16(over/8<<2|n)
	return late
}
