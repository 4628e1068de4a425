package detect

import (
	"fmt"
	"strings"
	"time"

	"github.com/beethq/beet/internal/schedule"
)

// The schedule in words: what the beet's page and alarms say it runs on.

func (m *RateModel) describeSchedule() string {
	words, _ := m.calendarWords()
	if n := m.skippedRuns(); n > 0 {
		return fmt.Sprintf("%s; it skips a run now and then, so a stop is flagged once %d runs in a row are missed, %s after the last one's time", words, n+1, graceWords(m.Grace()))
	}
	return words + "; a missed run is flagged " + graceWords(m.Grace()) + " after its time"
}

// graceWords writes a learned grace: to the second under 10 minutes, where
// Duration's whole minutes said "1 min" of a 15-minute job's 90 s and its
// alarm came half a minute after the time that implied.
func graceWords(g time.Duration) string {
	if g < 10*time.Minute {
		return Exact(g.Truncate(time.Second))
	}
	return Duration(g)
}

// calendarWords says the schedule in words ("weekdays at 06:30
// Europe/Berlin, usually 0-3 min late") and as the equivalent cron line in
// the beet's zone ("30 6 * * 1-5"; empty when cron cannot say it).
func (m *RateModel) calendarWords() (words, cron string) {
	p := int64(m.period)
	at := slotClock(time.Unix(m.cluster, 0)).In(m.loc)
	hh, mm := at.Hour(), at.Minute()
	days, dow := daysWords(m.daysOn)
	young := !m.calendarKnown()
	if young && p <= 86400 {
		// Days not known yet: what is watched (watchedSlot, youngDays).
		days, dow = daysWords(m.youngDays())
	}
	zone := m.loc.String()
	switch {
	case m.semiMonthly():
		d1, d2 := m.semiDaysAt()
		words = fmt.Sprintf("on the %s and %s of each month at %02d:%02d %s", monthDayWords(d1), monthDayWords(d2), hh, mm, zone)
		if d2 <= 28 {
			cron = fmt.Sprintf("%d %d %d,%d * *", mm, hh, d1, d2)
		}
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
	case p == 86400 && m.twiceDaily():
		words, cron = m.twiceDailyWords(at, days, dow)
	case p == 86400:
		words = fmt.Sprintf("%s at %02d:%02d %s", days, hh, mm, zone)
		cron = fmt.Sprintf("%d %d * * %s", mm, hh, dow)
	case p == 7*86400:
		words = fmt.Sprintf("weekly on %ss at %02d:%02d %s", at.Weekday(), hh, mm, zone)
		cron = fmt.Sprintf("%d %d * * %d", mm, hh, at.Weekday())
	case p%86400 == 0:
		words = fmt.Sprintf("every %d days at %02d:%02d %s", p/86400, hh, mm, zone)
	case m.loop():
		// On no clock: each run comes an interval after the last.
		words = fmt.Sprintf("again %s after each run", Exact(time.Duration(p)*time.Second))
	default:
		step := (p + 30) / 60 // minutes
		switch {
		case p < 600 && p%60 != 0:
			words = fmt.Sprintf("every %d s", p) // Duration would say 90 s is "1 min"
		case p < 600:
			words = "every " + Duration(time.Duration(p)*time.Second)
		case step == 60:
			words = fmt.Sprintf("every hour at :%02d", mm)
		case step%60 == 0:
			words = fmt.Sprintf("every %d h at :%02d", step/60, mm)
		default:
			words = "every " + Duration(time.Duration(step)*time.Minute)
		}
		hours, window := "*", m.dayWindow() && !young
		if window {
			words += fmt.Sprintf(" from %02d:%02d to %02d:%02d", m.winLo/60, m.winLo%60, m.winHi/60, m.winHi%60)
			hours = fmt.Sprintf("%d-%d", m.winLo/60, m.winHi/60)
			if m.wraps() {
				hours = fmt.Sprintf("%d-23,0-%d", m.winLo/60, m.winHi/60)
			}
		}
		if days != "every day" && (young || m.daysOn != 0) {
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
			if window && m.wraps() && (dow != "*" || step > 60) {
				// Its hours after midnight are the next days' (two cron
				// lines), or its steps do not start over at midnight.
				cron = ""
			}
		}
	}
	words = "runs " + words
	late := 3 * int64(m.lateMean) * m.lateUnit()
	if young {
		// A few runs make a poor mean: say the spread they showed (a
		// daily job whose first runs came over 5 min, the third the
		// earliest, was "usually 0-30 s late").
		late = max(late, int64(m.lateMax)*m.lateUnit())
	} else if m.spreadDaily() {
		// Runs delayed at random within a span: three times their mean
		// lateness is half as much again as the latest (a job delayed by
		// up to 8 h was "usually 0-13 h 6 min late", past its grace).
		late = min(late, int64(m.lateMax)*m.lateUnit())
	}
	if late > 0 {
		words += ", usually " + lateWords(late) + " late"
	} else {
		words += ", on time"
	}
	switch {
	case m.endRuns() >= endRunsSure:
		// endOff is whole seconds: 0 is an end within the second.
		words += ", with an end ping at most " + Duration(time.Duration(max(m.endOff, 1))*time.Second) + " after each start"
	case m.endOff > 0 && !m.twiceDaily():
		words += ", with a second ping about " + Duration(time.Duration(m.endOff)*time.Second) + " after each run"
	}
	if young && p <= 86400 && !m.loop() { // a young loop is watched at any hour, any day (watchedSlot)
		words += m.learningWords()
	}
	return words, cron
}

// learningWords says what a young schedule does not know yet, as a clause
// of its own after its runs: "; still learning its days and hours:
// weekends not seen yet, only 08:05-15:00 watched". Said in parentheses
// inside the words, they nested three deep in a missed run's reason.
func (m *RateModel) learningWords() string {
	var what, notes []string
	if m.youngDays()&weekendMask == 0 {
		what, notes = append(what, "days"), append(notes, "weekends not seen yet")
	}
	if hours, ok := m.youngHoursWords(); ok {
		what, notes = append(what, "hours"), append(notes, hours)
	}
	if len(what) == 0 {
		return ""
	}
	return "; still learning its " + strings.Join(what, " and ") + ": " + strings.Join(notes, ", ")
}

// twiceDaily reports whether a daily schedule's second ping is a second
// run of the day: a quarter of a day or more after the first (as offGrid
// takes it), not an end ping.
func (m *RateModel) twiceDaily() bool {
	return m.period == 86400 && m.endRuns() < endRunsSure && int64(m.endOff) >= 86400/4
}

// twiceDailyWords says a twice-daily job's two times, in the order of the
// day ("every day at 06:10 and 18:40 UTC"), and its cron line when one
// can say it (both at the same minute). Said as one run with a second
// ping 11 h 30 min after it, its morning run was "the second run of the
// day", and its cron line named only the evening one.
func (m *RateModel) twiceDailyWords(at time.Time, days, dow string) (words, cron string) {
	second := at.Add(time.Duration(m.endOff) * time.Second)
	h1, m1, h2, m2 := at.Hour(), at.Minute(), second.Hour(), second.Minute()
	zone := m.loc.String()
	nextDay := h2*60+m2 < h1*60+m1
	switch {
	case !nextDay:
		words = fmt.Sprintf("%s at %02d:%02d and %02d:%02d %s", days, h1, m1, h2, m2, zone)
	case dow == "*":
		words = fmt.Sprintf("%s at %02d:%02d and %02d:%02d %s", days, h2, m2, h1, m1, zone)
	default: // its second runs fall on the next days
		return fmt.Sprintf("%s at %02d:%02d %s, each followed by a run at %02d:%02d the next day", days, h1, m1, zone, h2, m2), ""
	}
	if m1 == m2 {
		cron = fmt.Sprintf("%d %d,%d * * %s", m1, min(h1, h2), max(h1, h2), dow)
	}
	return words, cron
}

// youngHoursWords says which slots of a young schedule under a day are
// watched (watchedSlot): those between its runs' earliest and latest time
// of day so far, or up to youngDayEnd when they began in the working day
// (youngDayGoesOn): "only 08:13-15:00 watched", "only 01:05-05:05". A stop
// outside them waits for the next watched slot. Not ok when they are the
// whole day (an hourly job seen from 00:38 to 23:38).
func (m *RateModel) youngHoursWords() (string, bool) {
	if m.winLo == noWindow || int64(m.period) >= 86400 {
		return "", false
	}
	lo, hi := m.windowSpan()
	if m.youngDayGoesOn(lo) {
		hi = max(hi, youngDayEnd/60)
	}
	if hi-lo+(int64(m.period)+59)/60 >= 1440 { // every slot of the day
		return "", false
	}
	hm := func(minute int64) string {
		minute = (minute%1440 + 1440) % 1440
		return fmt.Sprintf("%02d:%02d", minute/60, minute%60)
	}
	return "only " + hm(lo) + "-" + hm(hi) + " watched", true
}

// slotClock is the time a slot is said at: its minute, where a slot a few
// seconds before it (its runs come late, not early) is the next minute's.
// A missed run's reason says its slot so too: a job said to run at 23:48
// missed "the run due at 23:47".
func slotClock(slot time.Time) time.Time { return slot.Add(10 * time.Second) }

// monthDayWords says a day of the month: "15th", 31 as "last day".
func monthDayWords(d int) string {
	if d == 31 {
		return "last day"
	}
	return schedule.Ordinal(d)
}

// lateWords writes seconds for "usually 0-… late".
func lateWords(s int64) string { return "0-" + Duration(time.Duration(s)*time.Second) }

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
