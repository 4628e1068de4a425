package detect

import (
	"math"
	"time"
)

// The schedule's calendar: the days of the week it runs on and, for
// periods under a day, its window of the local day; and the local-day
// arithmetic on the beet's clock.

// noWindow marks a window of the day not learned yet.
const noWindow = math.MaxUint16

// learnCalendar marks the day of a run at slot as one the schedule runs on
// and, for periods under a day, widens the window of the day to it.
func (m *RateModel) learnCalendar(slot int64) {
	p := int64(m.period)
	if p > 86400 || p == 0 {
		return
	}
	if p < 86400 {
		_, sod := m.localDay(slot)
		m.widenWindow(sod/60, (p+30)/60)
	}
	day, _ := m.windowDay(slot)
	if ld, _ := m.localDay(slot); day != ld && m.dayWindow() && m.daysOn&(1<<weekday(day)) == 0 {
		// A run after midnight of a day not seen on yet: the window
		// wrapped while it was learned (a job every hour, all day, first
		// seen on a Friday afternoon, wraps from 13:00 to the Monday's
		// 00:00), not the end of a day the job runs on.
		day = ld
	}
	bit := uint8(1) << weekday(day)
	m.daysOn |= bit
	m.daysMissed &^= bit
}

// A window of the day may wrap midnight (winLo > winHi): a job on another
// zone's working hours (Los Angeles' 09:00-17:45 is 17:00-01:45 in UTC)
// or a night's batch window (20:00-04:00). Its slots after midnight are
// the day before's (windowDay). Widened only forward in the day, such a
// window was the whole day, and the end of its runs was flagged as
// missed every day (260 false alarms a year).

// widenWindow widens the window of the day to minute, the shorter way
// round the clock; a window that leaves less than a step (minutes)
// between its end and its start is the whole day (on the grid of its
// end).
func (m *RateModel) widenWindow(minute, step int64) {
	x := uint16(minute)
	if m.winLo == noWindow {
		m.winLo, m.winHi = x, x
		return
	}
	if !m.dayWindow() {
		return // the whole day already (anchorDay keeps where its days start)
	}
	if lo, hi := m.windowSpan(); minute >= lo && minute <= hi || minute+1440 <= hi || minute-1440 >= lo {
		return
	}
	after := (minute - int64(m.winHi) + 1440) % 1440 // minutes past the end
	before := (int64(m.winLo) - minute + 1440) % 1440
	if after < before {
		m.winHi = x
	} else {
		m.winLo = x
	}
	if m.winLo > m.winHi && int64(m.winLo-m.winHi) <= step {
		r := int64(m.winHi) % max(1, step)
		m.winLo, m.winHi = uint16(r), uint16(r+(1439-r)/max(1, step)*step)
	}
}

// wraps reports whether the window of the day wraps midnight.
func (m *RateModel) wraps() bool {
	return m.winLo != noWindow && m.winLo > m.winHi && int64(m.period) < 86400
}

// windowSpan is the window of the day in minutes, lo ≤ hi; when the
// window wraps midnight, hi is past 1440 (its days are its start's) or lo
// before 0 (its days are its end's: startsDay).
func (m *RateModel) windowSpan() (lo, hi int64) {
	lo, hi = int64(m.winLo), int64(m.winHi)
	switch {
	case hi >= lo:
	case m.startsDay():
		hi += 1440
	default:
		lo -= 1440
	}
	return lo, hi
}

// startsDay reports whether a window that wraps midnight belongs to the
// day it starts on, not the one it ends on: whether more of it comes
// before midnight. Los Angeles' working hours on a UTC beet, 17:00-01:45,
// are the day of 17:00; a job every 20 min on weekdays on Berlin's clock,
// from 23:00 to 22:40 on a UTC beet in winter (anchorDay), the day after.
func (m *RateModel) startsDay() bool { return 1440-int64(m.winLo) >= int64(m.winHi)+1 }

// windowMargin is how far outside the window of the day a slot is still
// in it, in minutes: half the period (p/120 minutes), at least one.
func (m *RateModel) windowMargin() int64 { return max(1, int64(m.period)/120) }

// windowDay is localDay, but of a window that wraps midnight, a slot on
// the other side of the middle of the gap between its end and its start
// is the window's day's (startsDay): after midnight, the day before's, sod
// seconds into it (past 86400), or before, the day after's (sod below 0).
// Runs past the window's end (a window still learned) are not a new day's.
func (m *RateModel) windowDay(unix int64) (day, sod int64) {
	day, sod = m.localDay(unix)
	if !m.wraps() {
		return day, sod
	}
	switch before := sod/60 < m.windowGapMid(); {
	case before && m.startsDay():
		day, sod = day-1, sod+86400
	case !before && !m.startsDay():
		day, sod = day+1, sod-86400
	}
	return day, sod
}

// windowGapMid is the middle of the gap of a window that wraps midnight,
// in minutes of the day.
func (m *RateModel) windowGapMid() int64 { return (int64(m.winLo) + int64(m.winHi)) / 2 }

// windowMinute is the minute of sod (seconds into a day, as localDay or
// windowDay count them) in windowSpan's frame: of a window that wraps
// midnight, a minute of the day on the other side of the middle of its
// gap is past 1440 or below 0, as windowDay counts it.
func (m *RateModel) windowMinute(sod int64) int64 {
	minute := floorDiv(sod, 60)
	if !m.wraps() || minute < 0 || minute >= 1440 {
		return minute
	}
	switch before := minute < m.windowGapMid(); {
	case before && m.startsDay():
		minute += 1440
	case !before && !m.startsDay():
		minute -= 1440
	}
	return minute
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
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
	day, sod := m.windowDay(t)
	seen := day - int64(m.calDay) - 1 // whole days since the schedule started
	if wd := weekday(day); m.daysOn&(1<<wd) == 0 && seen >= (wd-weekday(int64(m.calDay)+1)+7)%7+1 {
		return false
	}
	switch {
	case seen < 0:
		return true
	case seen == 0:
		// The second day: the first day's runs may have begun in the
		// window, but where they stopped, before the second day's
		// began, is its end (a job from 00:00 to 06:45, flagged at 07:00
		// on its first day and again on its second).
		lo, hi := m.windowSpan()
		return m.winLo == noWindow || int64(m.period) >= 86400 || lo > hi || m.windowMinute(sod) <= hi+m.windowMargin()
	}
	return m.inWindow(sod) && !m.earlierEnd(t, sod)
}

// earlierEnd reports whether slot t (sod seconds into its day, windowDay)
// lies in the last hour of a window that followed a clock change before
// (windowFollowed), after another change since its window-day began that
// makes the job an hour earlier: its runs end an hour sooner that day (a
// Berlin job from 01:10 to 05:10 on a UTC beet, the night Berlin's clocks
// go forward, ends at 03:10 UTC, not 04:10). The window follows at the
// next day's first run (windowClock).
func (m *RateModel) earlierEnd(t, sod int64) bool {
	if m.daysOn&windowFollowed == 0 || !m.dayWindow() {
		return false
	}
	lo, hi := m.windowSpan()
	minute := m.windowMinute(sod)
	return minute > hi-60 && m.clockDirs(t-(minute-lo+60)*60, t)&(1<<shiftEarlier) != 0
}

// inWindow reports whether a slot sod seconds into its day (as localDay or
// windowDay count them) is within the learned window of the day (give or
// take its margin), or no window is learned.
func (m *RateModel) inWindow(sod int64) bool {
	if int64(m.period) >= 86400 || m.winLo == noWindow {
		return true
	}
	lo, hi := m.windowSpan()
	minute, margin := m.windowMinute(sod), m.windowMargin()
	return minute+margin >= lo && minute <= hi+margin
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
	m.noteWindowCut(prev, slot)
	if p < 86400 && abs(slot-prev-p) <= p/2 {
		m.learnCalendar(prev)
	} else if day, sod := m.localDay(slot); day-int64(m.calDay) > 1 && !m.inWindow(sod) {
		return
	}
	m.learnCalendar(slot)
}

// windowFollowed (a bit of daysOn no weekday uses, under a day) marks
// that the window of the day followed a clock change (windowClock): the
// job keeps another zone's clock than the beet's, so at the next change
// its first slot is waited for an hour longer (laterClock).
const windowFollowed = 1 << 7

// windowCut (a bit of daysMissed no weekday uses) marks that the window
// expected a slot before the first run of the last day the schedule ran
// on, or after the last run of the day before it (noteWindowCut).
const windowCut = 1 << 7

// noteWindowCut takes a day's first run at slot, the run before it (the
// last of an earlier day) at prev: a window whose start or end the runs
// kept short of two days in a row moves to them. The job's hours changed
// (a crontab edited from 9-17 to 10-17), or it keeps to another zone's
// clock that has just changed (a job on UTC's working hours, on a beet in
// Berlin, runs 10:00-18:45 there from the spring change): kept, the
// window's first slot was flagged as missed every weekday until the
// autumn (TestWorkingHoursMove). One such day is flagged and moves
// nothing: a morning's outage is no new window.
func (m *RateModel) noteWindowCut(prev, slot int64) {
	p := int64(m.period)
	if p >= 86400 || m.winLo == noWindow || m.monthly() || !m.Scheduled() {
		return
	}
	if m.anchorDay(prev, slot) {
		return
	}
	pd, psod := m.windowDay(prev)
	d, sod := m.windowDay(slot)
	if (d > pd || m.acrossGap(prev, slot)) && m.windowClock(prev, slot, sod) {
		return
	}
	if d <= pd {
		return // not the day's first run
	}
	// A slot the window expects (inWindow: give or take its margin)
	// before the first run, or after the last.
	late, early := m.inWindow(sod-p), m.inWindow(psod+p)
	if m.daysMissed&windowCut != 0 {
		if late {
			m.winLo = uint16(sod / 60 % 1440)
		}
		if early {
			m.winHi = uint16(psod / 60 % 1440)
		}
	}
	m.daysMissed &^= windowCut
	if late || early {
		m.daysMissed |= windowCut
	}
}

// windowClock takes a day's first run at slot (sod seconds into its day,
// windowDay), the run before it at prev, an hour off the window's start
// the way a candidate zone's clocks, or the beet's own, changed relative
// to each other since the window-day of prev began (clockDirs): a job on
// another zone's clock (UTC's working hours on a beet in Berlin run
// 11:00-19:45 there from the spring change, 10:00-18:45 from the autumn
// one). The window's start moves to the run at once, and after an hour
// earlier its end moves too: its runs stop an hour sooner, and the slots
// of the hour that was its last were flagged as missed that day and the
// next (noteWindowCut moved the window only after two days). Its end
// does not move later: the runs widen it as they come, and a job on the
// beet's own clock, whose first run came an hour late on the day after a
// change, keeps its end. From then on the job is known to keep another
// clock (windowFollowed), and the first slot after a change that makes
// it later is waited for an hour longer (laterClock). Not before: most
// jobs keep their beet's clock, and a first run late on the Monday after
// any of the candidate zones' changes (several a year) went unflagged.
func (m *RateModel) windowClock(prev, slot, sod int64) bool {
	if !m.dayWindow() {
		return false // the whole day: anchorDay
	}
	minute, margin := floorDiv(sod, 60), m.windowMargin()
	for dir, h := range shiftOffs {
		off := aroundClock(minute - int64(m.winLo) + h/60)
		if abs(off) > margin || m.clockDirs(m.windowDayStart(prev), slot)&(1<<dir) == 0 {
			continue
		}
		if h > 0 { // shiftEarlier: runs an hour earlier
			m.winHi = uint16((int64(m.winHi) + 1440 - 60) % 1440)
		}
		m.winLo = uint16((minute%1440 + 1440) % 1440)
		m.daysOn |= windowFollowed
		m.daysMissed &^= windowCut
		return true
	}
	return false
}

// anchorDay takes a run at slot after a gap of over half a day since the
// run at prev, of a schedule that runs all day: when the gap ended on the
// day's grid where it began, away from the window's start, the job's days
// start there (the window, the whole day, wraps midnight at it). A job
// every 20 min on weekdays on Berlin's clock, on a UTC beet, runs from
// Sunday 23:00 to Friday 22:40 in winter: read by UTC's days, its Friday
// ran to 23:00 and was flagged every week (52 false alarms a year); from
// its first weekend its days start at 23:00. The local day the window no
// longer reaches, whose only runs lay on the other side of midnight, is
// no day it runs on. A start that moved an hour the way a zone's clocks
// just did marks the window as following another clock (windowFollowed).
func (m *RateModel) anchorDay(prev, slot int64) bool {
	if m.dayWindow() || slot-prev < 43200 {
		return false
	}
	step, margin := (int64(m.period)+30)/60, m.windowMargin()
	_, ps := m.localDay(prev)
	sd, ss := m.localDay(slot)
	b := floorDiv(ss, 60)
	dirs := m.clockDirs(m.windowDayStart(prev), slot)
	// The gap ends on the clock where it began, or an hour off the way the
	// clocks changed in it (a weekend with a clock change).
	switch off := aroundClock(floorDiv(ps, 60) + step - b); {
	case abs(off) <= margin:
	case abs(off-60) <= margin && dirs&(1<<shiftEarlier) != 0:
	case abs(off+60) <= margin && dirs&(1<<shiftLater) != 0:
	default:
		return false // an outage, not the end of the job's days
	}
	moved := aroundClock(b - int64(m.winLo))
	if abs(moved) <= margin {
		return false
	}
	if abs(moved-60) <= margin && dirs&(1<<shiftLater) != 0 || abs(moved+60) <= margin && dirs&(1<<shiftEarlier) != 0 {
		m.daysOn |= windowFollowed
	}
	m.winLo, m.winHi = uint16(b), uint16((b-step+1440)%1440)
	if m.wraps() {
		day := sd // its runs before midnight are the next day's
		if m.startsDay() {
			day, _ = m.localDay(prev) // its runs after midnight are the day before's
		}
		m.daysOn &^= 1 << weekday(day)
	}
	m.daysMissed &^= windowCut
	m.noteExplainedGap(slot, slot-prev) // fallback.go
	return true
}

// aroundClock is a difference of minutes of the day, in [-720, 720).
func aroundClock(d int64) int64 { return ((d%1440+1440+720)%1440 - 720) }

// gridClock takes a run at sec off the grid of a schedule every few hours
// on the wall clock (wallHours) in a window of the day (the latest run at
// prev), an hour off the grid the way a zone's clocks (or the beet's own)
// just changed: a job on another zone's clock (every
// 2 h from 08:30 on Los Angeles' clock, on a UTC beet) whose grid moved
// with them. The anchor moves to the run and the window of the day by the
// hour (windowFollowed), the schedule kept: followed as a job that moved,
// it was learned again from its runs, and a slot of the new grid an hour
// before the old window's start was flagged each morning until then.
func (m *RateModel) gridClock(prev, sec int64) bool {
	p := int64(m.period)
	if !m.wallHours() || !m.dayWindow() {
		return false // all day: the days' start follows (anchorDay)
	}
	off := ((sec-m.cluster)%p + p) % p // how far past the grid, in [0, p)
	tol := min(m.tolerance(), 600)
	dirs := m.clockDirs(m.windowDayStart(prev), sec)
	for _, c := range []struct {
		dir int
		h   int64
	}{{shiftLater, 3600}, {shiftEarlier, -3600}} {
		if d := ((off-c.h)%p + p) % p; min(d, p-d) > tol || dirs&(1<<c.dir) == 0 {
			continue
		}
		if m.winLo != noWindow {
			m.winLo = uint16((int64(m.winLo) + c.h/60 + 1440) % 1440)
			m.winHi = uint16((int64(m.winHi) + c.h/60 + 1440) % 1440)
		}
		m.daysOn |= windowFollowed
		m.daysMissed &^= windowCut
		m.cluster = sec
		return true
	}
	return false
}

// acrossGap reports whether runs at prev and slot lie either side of the
// window's gap (more than half of it between them): a window near
// midnight starts its day's runs before midnight after a clock change (a
// Berlin job from 01:10 to 05:10 on a UTC beet runs from 23:10 the day
// before in summer), on the local day of the last run before it.
func (m *RateModel) acrossGap(prev, slot int64) bool {
	lo, hi := m.windowSpan()
	return slot-prev > (1440-(hi-lo))*30
}

// windowDayStart is, for a run at t, a bound before its window-day's
// start: the window's length and an hour before it. A change in the
// night within a night's window (a UTC job from 20:00 to 04:00 on a
// Berlin beet) comes before the window-day's last run, not after it.
func (m *RateModel) windowDayStart(t int64) int64 {
	lo, hi := m.windowSpan()
	return t - (hi-lo+60)*60
}

// windowStart reports whether slot is the first slot of a day's window
// (give or take its margin) of a schedule under a day with a window short
// of the whole day.
func (m *RateModel) windowStart(slot int64) bool {
	if int64(m.period) >= 86400 || m.winLo == noWindow {
		return false
	}
	_, sod := m.localDay(slot)
	return abs(sod/60-int64(m.winLo)) <= m.windowMargin()
}

// dayWindow reports whether a schedule under a day has a window of the
// day short of the whole day.
func (m *RateModel) dayWindow() bool {
	lo, hi := m.windowSpan()
	return int64(m.period) < 86400 && m.winLo != noWindow && hi-lo+(int64(m.period)+30)/60 < 1440
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

// weekdayMask is Monday to Friday (bit 0 Sunday), weekendMask Saturday
// and Sunday.
const (
	weekdayMask = 0b0111110
	weekendMask = 0b1000001
)

// youngDays is the days of the week a young schedule (its days not known
// yet) is watched on: weekdays, and the weekend once a run came on either
// of its days. A job that runs on a Saturday is not a weekday job, and
// runs on the Sunday too as a rule (a daily job; "Monday to Saturday" is
// rare): waiting for its first Sunday run before watching Sundays left a
// daily job that started on a Thursday and stopped on its fourth day
// unflagged until Monday.
func (m *RateModel) youngDays() uint8 {
	days := m.daysOn | weekdayMask
	if m.daysOn&weekendMask != 0 {
		days |= weekendMask
	}
	return days
}

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
	return m.period == 86400 && m.daysOn == weekdayMask && m.daysMissed&^weekdayMask&^windowCut == weekendMask && m.streak >= weekdayStreak
}

// maxSlotScan bounds the slots looked at to skip those the schedule does
// not expect (a weekend of a 5-minute job is 576).
const maxSlotScan = 4096

// skippedDays returns the days of the week (a bit each) on which a slot
// the schedule expected lies between the anchor prev and its k-th slot.
func (m *RateModel) skippedDays(prev int64, k int64) uint8 {
	var days uint8
	for j := int64(1); j < min(k, maxSlotScan); j++ {
		if _, s := m.slotAt(prev, j); m.expectedSlot(s) {
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

// wallHours reports whether the schedule's period is whole hours from 2
// to 12 that divide a day: cron's "0 */6 * * *", whose runs keep to the
// wall clock's hours (00:00, 06:00, …) across a clock change, so one gap
// between them is an hour longer or shorter in real time. Read in real
// time alone, the run after the change was an hour late or early: a job
// every 3 h on a Berlin beet was flagged as missed at both changes of
// every year (TestEveryFewHoursAcrossClockChanges). Its slots are read
// as whole days' are: on the wall clock and in real time, the later of
// the two expected, the nearer taken as a run's lateness. A slot whose
// wall time the clocks skipped is not expected: cron does not run a job
// whose hours are a step ("*/2") in the skipped hour.
func (m *RateModel) wallHours() bool {
	p := int64(m.period)
	return p >= 7200 && p < 86400 && p%3600 == 0 && 86400%p == 0
}

// wallAfter is the wall-clock time secs seconds after t's (days later,
// for whole days).
func (m *RateModel) wallAfter(t, secs int64) int64 {
	w, _ := m.wallReading(t, secs)
	return w.Unix()
}

// wallSkipped is wallAfter, and whether the clocks skipped that time
// (where Go's time.Date puts it then, an hour either side of the jump,
// depends on the zone). Apart, so that a daily slot does not pay for the
// second zone lookup.
func (m *RateModel) wallSkipped(t, secs int64) (int64, bool) {
	w, c := m.wallReading(t, secs)
	h, mi, sec := w.Clock()
	return w.Unix(), (int64(h*3600+mi*60+sec)-int64(c.Hour()*3600+c.Minute()*60+c.Second())-secs)%86400 != 0
}

// wallReading is the wall-clock time secs seconds after t's, as
// time.Date puts it, and t on the beet's clock.
func (m *RateModel) wallReading(t, secs int64) (w, c time.Time) {
	c = time.Unix(t, 0).In(m.loc)
	return time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second()+int(secs), 0, m.loc), c
}

// wallGap is the difference of two instants' local wall-clock readings.
func wallGap(a, b int64, loc *time.Location) int64 {
	_, oa := time.Unix(a, 0).In(loc).Zone()
	_, ob := time.Unix(b, 0).In(loc).Zone()
	return (b + int64(ob)) - (a + int64(oa))
}

// offDayRun reports whether a whole-day schedule whose days are known
// (the day after its first has passed) does not run on the day of slot.
func (m *RateModel) offDayRun(slot int64) bool {
	return int64(m.period)%86400 == 0 && !m.monthly() && m.daysOn != 0 && !m.expectedSlot(slot)
}
