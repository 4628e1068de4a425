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
	m.setLateNext(m.lateSecond() / 60)
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

// monthly reports whether the schedule runs by the days of the month:
// once a month, or on two days of it (semiMonthly).
func (s *scheduleState) monthly() bool { return s.period == monthPeriod || s.period == semiMonthPeriod }

// semiMonthPeriod is the period of a schedule on two days of each month
// (`0 6 1,15 * *`, payroll and billing jobs): half a month. Its gaps are
// 13 to 17 days, so an "every 14 days" candidate kept flagging its runs
// after the longer gaps, and one whose gaps broke it at once was left to
// the fallback, which flagged nothing until a month of silence (a missed
// run was never flagged). Its days of the month are daysOn (the first)
// and daysMissed (the second; 31: the last day), which only schedules up
// to a day use otherwise.
const semiMonthPeriod = monthPeriod / 2

// semiMonthSlack is how far off its slot the run that makes a candidate
// semi-monthly may be: a punctual daily job's tolerance (a tenth of a
// day). Cron's `15,31` (no run in a month without a 31st) was taken at
// a twentieth of the period (18 h) for a job on the 1st and 16th at 02:00
// and flagged every other month.
const semiMonthSlack = 86400 / 10

// semiMonthly reports whether the schedule runs on two days of each month.
func (s *scheduleState) semiMonthly() bool { return s.period == semiMonthPeriod }

// halfMonth reports whether days (a candidate period, or the distance of
// two days of the month) is about half a month: 12 to 19.
func halfMonth(days int64) bool { return days >= 12 && days <= 19 }

// semiMonthlyCandidate takes a run at sec, late seconds off a candidate of
// 12-19 whole days and more than half a day off its grid, as a run of a
// schedule on two days of the month, as monthlyCandidate does for a
// month: the day of the latest run and this run's (the first runs on the
// 1st and 15th, then on the 1st: 14 days, then 17), when this run is an
// odd number of that schedule's slots after the latest, at its time give
// or take semiMonthSlack. The days are the slots', read at the latest
// run's time of day (toTimeOf): a job whose 5th run ended at 23:58 and
// whose 20th's ended at 00:01 was "the 5th and 21st", and its next run on
// the 5th a day late. untold: a day could not be told (dayOfMonth), and
// the next runs are to tell (the 15th and the last day, seen on the 15th
// and the 31st, left a candidate of 15 days that took the later runs for
// extras). A job every 14 days keeps its grid.
func (m *RateModel) semiMonthlyCandidate(prev, sec, late int64) (l int64, ok, untold bool) {
	p := int64(m.period)
	if p%86400 != 0 || !halfMonth(p/86400) || m.Scheduled() || abs(late) <= 43200 {
		return 0, false, false
	}
	first := time.Unix(prev, 0).In(m.loc)               // the latest run's slot: within half a day of it (lateness)
	at := time.Unix(m.toTimeOf(sec, prev), 0).In(m.loc) // this run's slot: the day a run after midnight belongs to
	d1, d2, told := m.semiDays(first, at)
	if !told {
		return 0, false, true
	}
	if !halfMonth(int64(d2) - int64(d1)) {
		return 0, false, false
	}
	days := monthDays{d1: int(d1), d2: int(d2), loc: m.loc}
	slot, n := first.Unix(), 0
	for ; slot < sec-semiMonthSlack && n < 64; n++ {
		slot = days.next(slot, 1)
	}
	l = sec - slot
	if n%2 == 0 || abs(l) > semiMonthSlack || abs(l) >= abs(late) {
		return 0, false, false
	}
	m.period, m.daysOn, m.daysMissed = semiMonthPeriod, d1, d2
	// The candidate's lateness was off its grid of whole days (runs a
	// day either way); this run's is the first on the days of the month.
	m.lateMean, m.lateMax, m.lateNext = 0, 0, 0
	m.noteMonthSpread(l)
	return l, true, false
}

// semiDays is the two days of the month of a semi-monthly candidate whose
// latest run's slot is first and this run's at: theirs, or when one of
// them cannot be told (dayOfMonth), that of the run that started the
// candidate in its place (calDay, while a run followed it on its grid):
// a job on the 15th and the last day is seen on the 31st more often than
// not, and on the 30th of a short month only between two runs 15 days
// apart (on a 15-day candidate's grid).
func (m *RateModel) semiDays(first, at time.Time) (d1, d2 uint8, told bool) {
	d1, ok1 := dayOfMonth(first)
	d2, ok2 := dayOfMonth(at)
	if (!ok1 || !ok2) && m.streak > 0 {
		y, mo, d := time.Unix(int64(m.calDay)*86400, 0).UTC().Date()
		if dc, ok := dayOfMonth(time.Date(y, mo, d, 12, 0, 0, 0, m.loc)); ok && ok1 != ok2 {
			if !ok1 {
				d1 = dc
			} else {
				d2 = dc
			}
			ok1, ok2 = true, true
		}
	}
	return min(d1, d2), max(d1, d2), ok1 && ok2 && d1 != d2
}

// dayOfMonth is t's day of the month as a semi-monthly schedule keeps it,
// if it can tell: 31 for the last day of a month of 29 or 30 days (a job
// on the 15th and the last day ran on April 30 and runs on May 31). The
// 31st, February 28 and other days from the 29th are not told: cron's
// `15,31` runs on no day of a shorter month, and the slot would be
// flagged there every time. Such a job waits for a run that tells.
func dayOfMonth(t time.Time) (uint8, bool) {
	d, last := t.Day(), t.AddDate(0, 0, 1).Day() == 1
	switch {
	case d <= 27 || d == 28 && !last:
		return uint8(d), true
	case d >= 29 && d <= 30 && last:
		return 31, true
	}
	return 0, false
}

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
	if m.semiMonthly() {
		return m.semiNext(t, months)
	}
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

// semiNext is the k-th slot of a semi-monthly schedule after the one
// nearest t (monthDays.next).
func (m *RateModel) semiNext(t, k int64) int64 { return m.semiDates().next(t, k) }

// semiDates is the schedule's two days of the month.
func (m *RateModel) semiDates() monthDays {
	return monthDays{d1: int(m.daysOn), d2: int(m.daysMissed), loc: m.loc}
}

// semiDaysAt is the two days of the month at the anchor's time of day:
// the schedule's, or a day before (after) them when the anchor crossed
// midnight (monthDays.next), if that can be said without the last day.
func (m *RateModel) semiDaysAt() (d1, d2 int) {
	days := m.semiDates()
	_, shift := days.nearest(time.Unix(m.cluster, 0).In(m.loc))
	if shift != 0 && days.d2 < 29 && days.d1+shift >= 1 && days.d2+shift <= 28 {
		return days.d1 + shift, days.d2 + shift
	}
	return days.d1, days.d2
}

// monthDays are two days of the month (d1 < d2; 31: the last day) in a
// zone: a semi-monthly schedule's slots.
type monthDays struct {
	d1, d2 int
	loc    *time.Location
}

// next is the k-th slot after the one nearest t, at t's wall-clock time;
// a day the month does not have is its last day. The slot nearest t may
// be read a day off its day of the month, when t (an anchor) crossed
// midnight: a job at 00:04 on the 2nd and 17th whose anchor an early run
// moved to 23:59 on the 1st is due at 23:59 on the 16th, not on the 17th,
// a day late.
func (d monthDays) next(t, k int64) int64 {
	c := time.Unix(t, 0).In(d.loc)
	near, shift := d.nearest(c)
	return d.slot(c, near+int(k), shift)
}

// nearest is the slot nearest c (slot's i) and how many days off its day
// of the month c reads it.
func (d monthDays) nearest(c time.Time) (near, shift int) {
	best := int64(math.MaxInt64)
	for _, s := range [...]int{0, -1, 1} {
		for i := -2; i <= 2; i++ { // c's month's two slots and those either side
			if off := abs(d.slot(c, i, s) - c.Unix()); off < best {
				near, shift, best = i, s, off
			}
		}
	}
	return near, shift
}

// slot is the i-th slot from the first day's slot of c's month (i may be
// negative), at c's wall-clock time, read shift days off its day.
func (d monthDays) slot(c time.Time, i, shift int) int64 {
	months, second := i/2, i%2 != 0
	if i < 0 && second {
		months-- // floor: slot −1 is the second day of the month before
	}
	first := time.Date(c.Year(), c.Month()+time.Month(months), 1, 12, 0, 0, 0, d.loc)
	day := d.d1
	if second {
		day = d.d2
	}
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(day, last)+shift, c.Hour(), c.Minute(), c.Second(), 0, d.loc).Unix()
}

// thirdDay reports whether a run at sec of a semi-monthly schedule came
// a day or more off both its days, at their time (atRunTime).
func (m *RateModel) thirdDay(sec int64) bool {
	if abs(sec-m.semiNext(sec, 0)) < 86400-semiMonthSlack {
		return false // its day's run, early or late, or a second ping
	}
	return m.atRunTime(sec)
}

// secondMonthDay takes a monthly job's run at sec on another day of the
// month, 12-19 days off its own, at its time (atRunTime), for the second
// month in a row, as a job on two days of the month: the first such day
// waits in daysMissed, which a monthly schedule does not use otherwise.
// A job on the 1st and 15th that missed a run while it was learned
// (August 1, then September 1) was "monthly on the 1st", its runs on the
// 15th extras, and a missed one never flagged.
func (m *RateModel) secondMonthDay(sec int64) bool {
	if m.period != monthPeriod || !m.Scheduled() || !m.atRunTime(sec) {
		return false
	}
	d, ok := dayOfMonth(time.Unix(m.toTimeOf(sec, m.cluster), 0).In(m.loc))
	own := m.daysOn
	if own == 0 {
		own, _ = dayOfMonth(time.Unix(m.cluster, 0).In(m.loc))
	}
	if !ok || own == 0 || !halfMonth(abs(int64(d)-int64(own))) {
		return false
	}
	if m.daysMissed != d {
		m.daysMissed = d // seen once: a run by hand, maybe
		return false
	}
	m.period, m.daysOn, m.daysMissed = semiMonthPeriod, min(d, own), max(d, own)
	m.cluster, m.endOff = sec, 0 // its runs were read as a second ping
	m.setRunPings(0)
	m.setExtraCount(0)
	return true
}

// atRunTime reports whether sec is at the time of day of the schedule's
// runs (its anchor's), give or take semiMonthSlack.
func (m *RateModel) atRunTime(sec int64) bool {
	return abs(m.toTimeOf(sec, m.cluster)-sec) <= semiMonthSlack
}

// toTimeOf is the instant nearest sec at ref's local time of day: the
// slot of a run at sec, whose day is the slot's even when the run came
// after midnight (a run at 00:01 of a job at 23:55).
func (m *RateModel) toTimeOf(sec, ref int64) int64 {
	_, s := m.localDay(sec)
	_, a := m.localDay(ref)
	d := (a - s) % 86400
	switch {
	case d > 43200:
		d -= 86400
	case d <= -43200:
		d += 86400
	}
	return sec + d
}
