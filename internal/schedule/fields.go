package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/cronexpr"
)

var monthNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	"january": 1, "february": 2, "march": 3, "april": 4, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}

var weekdayNames = map[string]int{
	"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
}

// parseField reads one comma-separated field made of `*`, `?`, values,
// ranges and steps (`*/15`, `5/10`, `1-5/2`) into a bit set over [lo, hi].
// ok is false for anything else, which after cronexpr's validation can only
// be the Quartz day forms L, W and #. For day-of-week (dow) 7 means Sunday,
// including at the end of a range (`5-7`, `mon-sun`).
func parseField(s string, lo, hi int, names map[string]int, dow bool) (set uint64, ok bool) {
	value := func(v string) (int, bool) {
		if n, err := strconv.Atoi(v); err == nil {
			if n == 7 && dow {
				return 7, true
			}
			return n, n >= lo && n <= hi
		}
		n, found := names[v]
		return n, found
	}
	for _, e := range strings.Split(strings.ToLower(s), ",") {
		step := 1
		if i := strings.IndexByte(e, '/'); i >= 0 {
			n, err := strconv.Atoi(e[i+1:])
			if err != nil || n < 1 {
				return 0, false
			}
			e, step = e[:i], n
		}
		first, last := lo, hi
		switch {
		case e == "*" || e == "?":
		case strings.IndexByte(e, '-') > 0:
			i := strings.IndexByte(e, '-')
			var ok1, ok2 bool
			first, ok1 = value(e[:i])
			last, ok2 = value(e[i+1:])
			if !ok1 || !ok2 {
				return 0, false
			}
			if dow && last == 0 && first > 0 {
				last = 7 // `fri-sun` runs through Sunday
			}
		default:
			var ok1 bool
			if first, ok1 = value(e); !ok1 {
				return 0, false
			}
			if step == 1 {
				last = first // `5` alone; `5/10` runs to hi
			}
		}
		for v := first; v <= last; v += step {
			if dow {
				v := v % 7
				set |= 1 << v
			} else {
				set |= 1 << v
			}
		}
	}
	return set, true
}

// starred reports whether a field starts with `*` (or `?`, which Beet reads
// as `*`): Vixie cron's DOM_STAR and DOW_STAR flags, and its MIN_STAR and
// HR_STAR, are set this way, by the field's first character, so `*/2` is
// starred and `1-31` is not.
func starred(field string) bool { return field[0] == '*' || field[0] == '?' }

// dowDays expands a day-of-week set to the day masks of every month shape.
func dowDays(dow uint8) (days [7][4]uint32) {
	for first := range 7 {
		for n := 28; n <= 31; n++ {
			for d := 1; d <= n; d++ {
				if dow&(1<<((first+d-1)%7)) != 0 {
					days[first][n-28] |= 1 << d
				}
			}
		}
	}
	return days
}

// domDays expands a day-of-month set to the day masks of every month shape.
func domDays(dom uint32) (days [7][4]uint32) {
	for first := range 7 {
		for n := 28; n <= 31; n++ {
			days[first][n-28] = dom & (uint32(1)<<(n+1) - 2) // bits 1..n
		}
	}
	return days
}

// combineDays applies Vixie cron's rule to the two day fields' masks: when
// either field starts with `*` (and) a day must match both, otherwise
// (both restricted by a list, range or value) it may match either.
func combineDays(dom, dow [7][4]uint32, and bool) (days [7][4]uint32) {
	for first := range 7 {
		for n := range 4 {
			if and {
				days[first][n] = dom[first][n] & dow[first][n]
			} else {
				days[first][n] = dom[first][n] | dow[first][n]
			}
		}
	}
	return days
}

// monthShapes holds, for each weekday of the 1st and month length 28-31, one
// real month of that shape: cronexpr is asked about it to learn the meaning
// of L, W and # for every month of the same shape.
var monthShapes = sync.OnceValue(func() (reps [7][4]struct{ y, m int }) {
	for y := 2000; y < 2028; y++ { // 28 years contain every shape
		for m := 1; m <= 12; m++ {
			z := daysFromCivil(int64(y), m, 1)
			reps[weekday(z)][monthLen(int64(y), m)-28] = struct{ y, m int }{y, m}
		}
	}
	return reps
})

// quartzDays computes the day masks of one day field that uses cronexpr's
// Quartz extensions, by enumerating cronexpr's matches in one month of each
// shape with the other day field `*`. This runs only at parse time, on a
// private Expression.
func quartzDays(field string, dom bool) (days [7][4]uint32, err error) {
	spec := "0 0 0 * * " + field + " *"
	if dom {
		spec = "0 0 0 " + field + " * * *"
	}
	probe, err := cronexpr.Parse(spec)
	if err != nil {
		return days, err
	}
	reps := monthShapes()
	for first := range 7 {
		for n := 28; n <= 31; n++ {
			r := reps[first][n-28]
			if r.y == 0 {
				return days, fmt.Errorf("no sample month for weekday %d, %d days", first, n)
			}
			t := time.Date(r.y, time.Month(r.m), 1, 0, 0, 0, 0, time.UTC).Add(-time.Second)
			for t = probe.Next(t); !t.IsZero() && t.Year() == r.y && int(t.Month()) == r.m; t = probe.Next(t) {
				days[first][n-28] |= 1 << t.Day()
			}
		}
	}
	return days, nil
}
