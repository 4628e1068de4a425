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
// star reports an entry of `*` or `?` (the field is unrestricted, in
// cronexpr's sense). ok is false for anything else, which after cronexpr's
// validation can only be the Quartz day forms L, W and #. For day-of-week
// (dow) 7 means Sunday, including at the end of a range (`5-7`, `mon-sun`).
func parseField(s string, lo, hi int, names map[string]int, dow bool) (set uint64, star, ok bool) {
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
				return 0, false, false
			}
			e, step = e[:i], n
		}
		first, last := lo, hi
		switch {
		case e == "*" || e == "?":
			star = star || step == 1
		case strings.IndexByte(e, '-') > 0:
			i := strings.IndexByte(e, '-')
			var ok1, ok2 bool
			first, ok1 = value(e[:i])
			last, ok2 = value(e[i+1:])
			if !ok1 || !ok2 {
				return 0, false, false
			}
			if dow && last == 0 && first > 0 {
				last = 7 // `fri-sun` runs through Sunday
			}
		default:
			var ok1 bool
			if first, ok1 = value(e); !ok1 {
				return 0, false, false
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
	return set, star, true
}

// combineDays builds the per-month-shape day masks from plain day-of-month
// and day-of-week sets: with both restricted, either may match (cron's rule).
func combineDays(dom uint32, dow uint8, domStar, dowStar bool) (days [7][4]uint32) {
	for first := range 7 {
		for n := 28; n <= 31; n++ {
			all := uint32(1)<<(n+1) - 2 // bits 1..n
			if domStar && dowStar {
				days[first][n-28] = all
				continue
			}
			var m uint32
			if !domStar {
				m |= dom & all
			}
			if !dowStar {
				for d := 1; d <= n; d++ {
					if dow&(1<<((first+d-1)%7)) != 0 {
						m |= 1 << d
					}
				}
			}
			days[first][n-28] = m
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

// quartzDays computes the day masks for day fields that use cronexpr's
// Quartz extensions, by enumerating cronexpr's matches in one month of each
// shape. This runs only at parse time, on a private Expression.
func quartzDays(domField, dowField string) (days [7][4]uint32, err error) {
	probe, err := cronexpr.Parse("0 0 0 " + domField + " * " + dowField + " *")
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
