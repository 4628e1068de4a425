// Package schedule parses and evaluates cron expressions for beets in cron
// detection mode. It keeps Beet to the classic five fields (minute hour
// day-of-month month day-of-week) or an @daily-style macro, so an expression
// means the same thing here as in a crontab; github.com/hashicorp/cronexpr
// validates the syntax.
//
// # Evaluating across daylight-saving changes
//
// Slots are computed in the beet's IANA time zone by Cron.Next and Cron.Prev
// as Vixie cron (Debian's cron, cronie) runs a crontab on a machine whose
// clock is in that zone. Its cron.c sorts jobs by the MIN_STAR and HR_STAR
// flags, set when the minute or hour field starts with `*`:
//
//   - Fixed-time expressions, whose minute and hour fields both start with
//     something else (`30 2 * * *`, `0 1,2 * * *`, `0 9-17 * * 1-5`,
//     `0,30 2 * * *`), run at each matching wall-clock minute once: a
//     fall-back's repeated hour runs only the first time, and the minutes
//     a spring-forward gap skips all run at its end, the first instant
//     that exists (02:30 in a 02:00→03:00 gap runs at 03:00 new time, with
//     the 03:00 run, as one slot).
//   - Wildcard expressions (`0 * * * *`, `*/15 * * * *`, `0 */2 * * *`,
//     `*/30 1 * * *`, `@hourly`) step through absolute time and run at
//     every instant whose local wall clock matches: in both passes of a
//     fall-back's repeated hour, and never at a wall time a gap skips.
//
// A clock change of 3 hours or more (Samoa skipping 2011-12-30) is a clock
// correction to cron: the minutes it skips do not run, and a repeat longer
// than 3 hours runs again. A jump forward of under 5 minutes, for which cron
// also runs the wildcard jobs of the minutes skipped, is taken as any gap.
//
// # Day of month and day of week
//
// As in Vixie cron (Debian's cron, cronie): when either day field starts
// with `*` a day must match both (`0 3 */2 * 1-5` is odd-numbered days that
// are weekdays; `0 0 * * 5` is every Friday); when both are restricted and
// neither starts with `*`, a day matches if either does (`0 0 13 * 5` is
// every 13th and every Friday; `0 9 1-7 * 1` is the first week and every
// Monday). It is the field's first character that counts, so `*/2` joins
// with and, where cronexpr and robfig/cron join it with or. `?` reads as
// `*`. Day-of-week 7 is Sunday, also as the end of a range: `1-7` and
// `mon-sun` are every day here, where cronexpr drops the Sunday. The Quartz
// forms cronexpr accepts (`L`, `LW`, `15W`, `5L`, `5#3`) keep cronexpr's
// meaning within their field and join the other field by the same rule. An
// expression that can never match (`0 0 31 2 *`, `5-2 * * * *`) is
// rejected by ParseCron.
//
// A Cron is immutable and safe for concurrent use; Next and Prev do not
// allocate. (cronexpr's own Next writes to the expression, so it is never
// called on a shared value.) Next and Prev return the zero Time when no slot
// exists within 400 years. Zone periods come from Time.ZoneBounds, whose
// wrong spans at the end of leap years past the tzdata table
// (golang/go#81583) are detected and worked around.
package schedule

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/hashicorp/cronexpr"
)

// macros are the crontab shorthands users paste; each stands for five fields.
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// Cron is a parsed five-field cron expression, reduced to bit sets so that
// evaluating it is a few bit operations per day.
type Cron struct {
	text string

	minutes uint64 // bit m: minute m (0-59)
	hours   uint32 // bit h: hour h (0-23)
	months  uint16 // bit m: month m (1-12)
	// days[w][n-28] has bit d set when day d matches in a month of n days
	// whose first day is weekday w. These two facts are all that the day
	// fields (including L, W and #) depend on, so 28 masks cover every month.
	days [7][4]uint32

	fixed        bool // neither minute nor hour starts with `*`: Vixie cron's fixed-time job
	single       bool // one minute and one hour, hour:minute (for Describe)
	hour, minute int

	// domStar and dowStar: the day field starts with `*` (Vixie cron's
	// flags). dom and dow are for Describe, valid only when plainDays.
	domStar, dowStar bool
	plainDays        bool
	dom              uint32 // bit d: day of month d
	dow              uint8  // bit w: weekday w, Sunday = 0
}

// ParseCron parses a five-field cron expression (minute hour day-of-month
// month day-of-week) or one of the @daily-style macros.
func ParseCron(text string) (*Cron, error) {
	fields := strings.Fields(text)
	if len(fields) == 1 {
		if m, ok := macros[strings.ToLower(fields[0])]; ok {
			fields = strings.Fields(m)
		}
	}
	if len(fields) != 5 {
		return nil, fmt.Errorf("want 5 fields (minute hour day-of-month month day-of-week), got %d", len(fields))
	}
	// cronexpr reads 5 fields as minute-first, like crontab. It is the judge
	// of what is valid; the parsing below only has to read what it accepted.
	if _, err := cronexpr.Parse(strings.Join(fields, " ")); err != nil {
		return nil, err
	}
	c := &Cron{text: strings.Join(fields, " ")}

	var ok bool
	var m uint64
	if m, ok = parseField(fields[0], 0, 59, nil, false); !ok || m == 0 {
		return nil, fmt.Errorf("minute field %q matches no minute", fields[0])
	}
	c.minutes = m
	if m, ok = parseField(fields[1], 0, 23, nil, false); !ok || m == 0 {
		return nil, fmt.Errorf("hour field %q matches no hour", fields[1])
	}
	c.hours = uint32(m)
	if m, ok = parseField(fields[3], 1, 12, monthNames, false); !ok || m == 0 {
		return nil, fmt.Errorf("month field %q matches no month", fields[3])
	}
	c.months = uint16(m)

	c.domStar, c.dowStar = starred(fields[2]), starred(fields[4])
	dom, okDom := parseField(fields[2], 1, 31, nil, false)
	dow, okDow := parseField(fields[4], 0, 6, weekdayNames, true)
	c.plainDays = okDom && okDow
	c.dom, c.dow = uint32(dom), uint8(dow)
	domMasks, dowMasks := domDays(c.dom), dowDays(c.dow)
	var err error
	if !okDom {
		if domMasks, err = quartzDays(fields[2], true); err != nil {
			return nil, err
		}
	}
	if !okDow {
		if dowMasks, err = quartzDays(fields[4], false); err != nil {
			return nil, err
		}
	}
	c.days = combineDays(domMasks, dowMasks, c.domStar || c.dowStar)
	// 400 years is a whole Gregorian cycle: no match in it means never.
	if _, ok := c.nextDay(daysFromCivil(2000, 1, 1)); !ok {
		return nil, fmt.Errorf("%q matches no day", c.text)
	}

	c.fixed = !starred(fields[0]) && !starred(fields[1])
	if bits.OnesCount64(c.minutes) == 1 && bits.OnesCount32(c.hours) == 1 {
		c.single = true
		c.minute = bits.TrailingZeros64(c.minutes)
		c.hour = bits.TrailingZeros32(c.hours)
	}
	return c, nil
}

// String returns the normalised five-field expression.
func (c *Cron) String() string { return c.text }

// Fixed reports whether the expression names a single time of day (one
// minute, one hour) and is therefore evaluated on the local wall clock.
func (c *Cron) Fixed() bool { return c.fixed }
