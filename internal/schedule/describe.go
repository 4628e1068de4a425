package schedule

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

const (
	allMinutes = uint64(1)<<60 - 1
	allHours   = uint32(1)<<24 - 1
	allMonths  = uint16(1)<<13 - 2  // bits 1..12
	allDom     = uint32(0xfffffffe) // bits 1..31
	allDow     = uint8(1)<<7 - 1
	oddDom     = uint32(0xaaaaaaaa) // 1, 3, … 31
	evenDom    = uint32(0x55555554) // 2, 4, … 30
)

var weekdayPlural = [7]string{"Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"}

// Describe puts the schedule in words for the common shapes, for example
// "every day at 02:00 Europe/Riga", "weekdays at 09:00 America/New_York",
// "Mondays at 06:30 UTC", "on the 1st of every month at 00:00 UTC",
// "Fridays that fall on odd days of the month at 03:00 UTC", "on the 13th
// of every month and on Fridays at 00:00 UTC", "every 2 hours at :00
// Europe/Riga", "every hour at :00", "every 15 minutes" and "every
// minute", and otherwise "on the schedule `<expr>` in <zone>". Schedules
// that repeat within the hour, and hourly ones, name no zone: their times
// do not depend on it in whole-hour zones. The zone is not in parentheses,
// as auto mode's words have it: a missed run's reason puts the words in
// parentheses ("… no event by 04:05 (every day at 03:30 Europe/Riga).").
func (c *Cron) Describe(loc *time.Location) string {
	zone := "UTC"
	if loc != nil {
		zone = loc.String()
	}
	fallback := fmt.Sprintf("on the schedule `%s` in %s", c.text, zone)
	if !c.plainDays || c.months != allMonths {
		return fallback
	}
	days := c.daysInWords()
	if c.single {
		if days == "" {
			return fallback
		}
		return days + fmt.Sprintf(" at %02d:%02d %s", c.hour, c.minute, zone)
	}
	if days != "every day" {
		return fallback
	}
	oneMinute := bits.OnesCount64(c.minutes) == 1
	switch {
	case c.hours == allHours && c.minutes == allMinutes:
		return "every minute"
	case c.hours == allHours && oneMinute:
		return fmt.Sprintf("every hour at :%02d", bits.TrailingZeros64(c.minutes))
	case c.hours == allHours:
		if n := evenStep(c.minutes, 60); n > 0 {
			return fmt.Sprintf("every %d minutes", n)
		}
	case oneMinute:
		if n := evenStep(uint64(c.hours), 24); n > 0 {
			return fmt.Sprintf("every %d hours at :%02d %s", n, bits.TrailingZeros64(c.minutes), zone)
		}
	}
	return fallback
}

// daysInWords names the days a plain expression runs on, joining the two
// day fields as ParseCron does: "every day", "weekdays", "on the 1st of
// every month", "Fridays that fall on odd days of the month" (and), "on the
// 13th of every month and on Fridays" (or); "" when it has no short name.
func (c *Cron) daysInWords() string {
	domAll, dowAll := c.dom == allDom, c.dow == allDow
	if c.domStar || c.dowStar { // a day matches both fields
		switch {
		case domAll && dowAll:
			return "every day"
		case domAll:
			return weekdaysInWords(c.dow)
		}
		dom := domInWords(c.dom)
		switch {
		case dom == "":
			return ""
		case dowAll:
			return "on " + dom + " of every month"
		}
		if dow := weekdaysInWords(c.dow); dow != "" {
			return dow + " that fall on " + dom + " of the month"
		}
		return ""
	}
	if domAll || dowAll { // a day matches either field
		return "every day"
	}
	dom, dow := domInWords(c.dom), weekdaysInWords(c.dow)
	if dom == "" || dow == "" {
		return ""
	}
	return "on " + dom + " of every month and on " + dow
}

// domInWords names a set of days of the month: "the 13th", "the 1st to the
// 7th", "odd days", "even days"; "" for any other set.
func domInWords(set uint32) string {
	lo, hi := bits.TrailingZeros32(set), 31-bits.LeadingZeros32(set)
	switch {
	case set == 0:
		return ""
	case lo == hi:
		return "the " + Ordinal(lo)
	case set == oddDom:
		return "odd days"
	case set == evenDom:
		return "even days"
	case set == uint32(1)<<(hi+1)-uint32(1)<<lo:
		return "the " + Ordinal(lo) + " to the " + Ordinal(hi)
	}
	return ""
}

// evenStep returns n if set is exactly {0, n, 2n, …} below size and n divides
// size (so the gaps are all equal, also across the wrap), else 0.
func evenStep(set uint64, size int) int {
	if set&1 == 0 || bits.OnesCount64(set) < 2 {
		return 0
	}
	n := bits.TrailingZeros64(set &^ 1)
	if size%n != 0 {
		return 0
	}
	var want uint64
	for v := 0; v < size; v += n {
		want |= 1 << v
	}
	if set != want {
		return 0
	}
	return n
}

// weekdaysInWords names a set of weekdays: "weekdays", "weekends",
// "Mondays", "Mondays and Thursdays", "Mondays, Wednesdays and Fridays".
func weekdaysInWords(set uint8) string {
	switch set {
	case 0b0111110:
		return "weekdays"
	case 0b1000001:
		return "weekends"
	case 0b1111111:
		return "every day"
	}
	var names []string
	for _, w := range []int{1, 2, 3, 4, 5, 6, 0} { // the week starts on Monday
		if set&(1<<w) != 0 {
			names = append(names, weekdayPlural[w])
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Ordinal writes a day of the month or a count: 1st, 2nd, 3rd, 4th, … 11th, 21st.
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
