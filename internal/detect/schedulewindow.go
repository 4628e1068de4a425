package detect

// The schedule's window of the day, for periods under a day: learned from
// the runs (widened the shorter way round the clock, so it may wrap
// midnight), cut to runs that keep short of its ends, and followed when
// the job keeps another zone's clock and that clock changes.

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
	if after, before := m.roundToWindow(minute); after < before {
		m.winHi = x
	} else {
		m.winLo = x
	}
	if m.winLo > m.winHi && int64(m.winLo-m.winHi) <= step {
		r := int64(m.winHi) % max(1, step)
		m.winLo, m.winHi = uint16(r), uint16(r+(1439-r)/max(1, step)*step)
	}
}

// roundToWindow is how far minute of the day lies past the window's end
// and before its start, going round the clock.
func (m *RateModel) roundToWindow(minute int64) (after, before int64) {
	return (minute - int64(m.winHi) + 1440) % 1440, (int64(m.winLo) - minute + 1440) % 1440
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

// floorDiv is a/b rounded down (Go's / truncates toward zero).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// earlierEnd reports whether slot t (sod seconds into its day, windowDay)
// lies in the last hour of a window after a change since its window-day
// began that makes the job an hour earlier (windowClockDirs: any zone's
// once the window followed one, the beet's own before): its runs end an
// hour sooner that day (a Berlin job from 01:10 to 05:10 on a UTC beet,
// the night Berlin's clocks go forward, ends at 03:10 UTC, not 04:10). The
// window follows at the next day's first run (windowClock).
func (m *RateModel) earlierEnd(t, sod int64) bool {
	if !m.dayWindow() {
		return false
	}
	lo, hi := m.windowSpan()
	minute := m.windowMinute(sod)
	return minute > hi-60 && m.windowClockDirs(t-(minute-lo+60)*60, t)&(1<<shiftEarlier) != 0
}

// windowClockDirs is the directions in which a clock change in (from, to]
// may have moved a window of the day: clockDirs once it followed one
// (windowFollowed), else the beet's own change alone (ownClockDirs). A
// job on a server's UTC clock, on a beet in Berlin, starts an hour later
// there the day after the spring change and ends an hour sooner after the
// autumn one: its first change was flagged, at its window's first slot or
// its last hour's (22 of the cron sweep's 50 such years). Not every
// candidate zone's change before the window followed one: several a
// year, and a run late on each of those days went unflagged. None for a
// job all day every day, whose runs cannot tell one clock from another
// (its window's start is only where its days were cut).
func (m *RateModel) windowClockDirs(from, to int64) uint8 {
	const week = weekdayMask | weekendMask
	switch days := m.daysOn & week; {
	case m.daysOn&windowFollowed != 0:
		return m.clockDirs(from, to)
	case m.dayWindow() || days != 0 && days != week:
		return m.ownClockDirs(from, to)
	}
	return 0
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

// windowFollowed (a bit of daysOn no weekday uses, under a day) marks
// that the window of the day followed a clock change (windowClock,
// anchorDay, gridClock): the job keeps another zone's clock than the
// beet's, so at the next change its first slot is waited for an hour
// longer (laterClock), or its night's end an hour less (earlierEnd).
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
			m.winLo = dayMinute(floorDiv(sod, 60))
		}
		if early {
			m.winHi = dayMinute(floorDiv(psod, 60))
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
			m.winHi = dayMinute(int64(m.winHi) - 60)
		}
		m.winLo = dayMinute(minute)
		m.daysOn |= windowFollowed
		m.daysMissed &^= windowCut
		return true
	}
	return false
}

// holeClock moves a window that leaves a hole in the day (holeMost at
// most: `*/15 0-1,3-23`, UTC's on a Berlin beet from 04:00 to 02:45) an
// hour with the clock its job keeps, when the run after the one at prev
// comes past the window's end by an hour at most, after a clock change:
// an hour later, or an hour earlier when the run is where the window's
// start an hour earlier would be (the hole was the hour the clocks
// skipped: Los Angeles' 02:00 on a UTC beet). Widened by those runs, the
// window closed over the hole, and the hole was flagged every night until
// the clocks changed back. (windowClock follows a day's first run an hour
// off the window's start.)
func (m *RateModel) holeClock(prev, slot int64) {
	if !m.dayWindow() {
		return
	}
	if lo, hi := m.windowSpan(); 1440-(hi-lo) > holeMost {
		return // a working day's or a night's window: no local time asked (most runs)
	}
	_, sod := m.localDay(slot)
	minute := floorDiv(sod, 60)
	if past, _ := m.roundToWindow(minute); past == 0 || past > 60 {
		return
	}
	move, dirs := int64(0), m.clockDirs(m.windowDayStart(prev), slot)
	switch {
	case dirs&(1<<shiftLater) != 0:
		move = 60
	case dirs&(1<<shiftEarlier) != 0 && abs(aroundClock(minute-int64(m.winLo)+60)) <= m.windowMargin():
		move = -60
	default:
		return
	}
	m.winLo, m.winHi = dayMinute(int64(m.winLo)+move), dayMinute(int64(m.winHi)+move)
	m.daysOn |= windowFollowed
}

// holeMost is the longest hole in the day (minutes) holeClock moves a
// window by: longer, the window is a working day's or a night's, whose
// ends the runs widen and windowClock follows.
const holeMost = 6 * 60

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
	m.winLo, m.winHi = dayMinute(b), dayMinute(b-step)
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
func aroundClock(d int64) int64 { return around(d, 1440) }

// around is d taken round a cycle of n, in [-n/2, n/2).
func around(d, n int64) int64 { return (d%n+n+n/2)%n - n/2 }

// dayMinute is a minute taken round the day, as the window stores it.
func dayMinute(x int64) uint16 { return uint16((x%1440 + 1440) % 1440) }

// gridClock takes a run at sec an hour off the grid of a schedule every
// few hours on the wall clock (wallHours; the latest run at prev), the way
// a zone's clocks (or the beet's own) just changed: a job on another
// zone's clock (every 2 h from 08:30 on Los Angeles' clock, on a UTC beet)
// whose grid moved with them. The anchor moves to the run and the window
// of the day by the hour (windowFollowed), the schedule kept: followed as
// a job that moved, it was learned again from its runs, and a slot of the
// new grid an hour before the old window's start was flagged each morning
// until then. So for a job all day on weekdays, whose window is where its
// days start (anchorDay): every 3 h on Berlin's clock, on a UTC beet, its
// Monday's first run came at Sunday 22:00 after the spring change, was
// taken for an extra run, and the old grid's 23:00 was flagged.
func (m *RateModel) gridClock(prev, sec int64) bool {
	p := int64(m.period)
	if !m.wallHours() {
		return false
	}
	tol := min(m.tolerance(), 600)
	dirs := m.clockDirs(m.windowDayStart(prev), sec)
	for _, c := range []struct {
		dir int
		h   int64
	}{{shiftLater, 3600}, {shiftEarlier, -3600}} {
		if abs(around(sec-m.cluster-c.h, p)) > tol || dirs&(1<<c.dir) == 0 {
			continue
		}
		m.moveWindow(c.h / 60)
		m.daysOn |= windowFollowed
		m.daysMissed &^= windowCut
		m.cluster = sec
		return true
	}
	return false
}

// moveWindow moves the window of the day by d minutes, keeping the days
// it runs on: a window that wraps midnight is named by the day of its
// larger part (startsDay), and one moved across midnight or past the
// middle starts on, or is named by, another day. A Sydney job every 3 h
// on weekdays, on a UTC beet, runs from Sunday 14:00 to Friday 11:00 in
// winter, each window-day named by its larger part after midnight; from
// Sydney's spring change it runs from 13:00, the larger part before
// midnight, and its days must be named a day earlier (Sunday to Thursday)
// or Friday's 13:00 slot, Saturday on Sydney's clock, is expected.
func (m *RateModel) moveWindow(d int64) {
	if m.winLo == noWindow {
		return
	}
	before := m.windowNameDay()
	lo := int64(m.winLo) + d
	m.winLo, m.winHi = dayMinute(lo), dayMinute(int64(m.winHi)+d)
	rot := floorDiv(lo, 1440) + m.windowNameDay() - before
	m.daysOn = m.daysOn&^0x7F | rotateDays(m.daysOn, rot)
	m.daysMissed = m.daysMissed&^0x7F | rotateDays(m.daysMissed, rot)
}

// windowNameDay is the days from the window's start to the day that
// names it: 1 for a window that wraps midnight named by its end's day.
func (m *RateModel) windowNameDay() int64 {
	if m.wraps() && !m.startsDay() {
		return 1
	}
	return 0
}

// rotateDays moves the weekday bits (bit 0 Sunday) of days by n days.
func rotateDays(days uint8, n int64) uint8 {
	n = (n%7 + 7) % 7
	w := uint16(days & 0x7F)
	return uint8((w<<n | w>>(7-n)) & 0x7F)
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
