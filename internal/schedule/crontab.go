package schedule

import (
	"strconv"
	"strings"
)

// crontabMacros are the @-lines Vixie cron takes, as it spells them.
var crontabMacros = map[string]bool{
	"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true,
	"@daily": true, "@midnight": true, "@hourly": true,
}

// Crontab reports whether a crontab on Debian (cron 3.0, Vixie cron) runs
// the expression as Beet reads it, so that it can be offered as a crontab
// line. Beet's schedule field takes more: the Quartz forms `L`, `W` and
// `#`, `?`, full day and month names, `5/10` (which Vixie cron reads as
// `5`) and ranges through Sunday such as `fri-sun`; Debian's cron refuses
// or misreads them. (It also ignores CRON_TZ=, so a crontab line runs on
// the machine's clock.)
func Crontab(text string) bool {
	fields := strings.Fields(text)
	if len(fields) == 1 {
		return crontabMacros[fields[0]]
	}
	if len(fields) != 5 {
		return false
	}
	if _, err := ParseCron(text); err != nil {
		return false
	}
	bounds := [5]struct {
		lo, hi int
		names  []string
	}{{0, 59, nil}, {0, 23, nil}, {1, 31, nil}, {1, 12, monthAbbr}, {0, 7, dayAbbr}}
	for i, f := range fields {
		b := bounds[i]
		for _, e := range strings.Split(f, ",") {
			if !crontabEntry(e, b.lo, b.hi, b.names) {
				return false
			}
		}
	}
	return true
}

var (
	monthAbbr = []string{"", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dayAbbr   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
)

// crontabEntry checks one list entry against entry.c's grammar: `*` or
// number[-number], then an optional /step; a number is digits or, in the
// month and day fields, a three-letter name (any case).
func crontabEntry(e string, lo, hi int, names []string) bool {
	rng, step, stepped := strings.Cut(e, "/")
	if stepped {
		if n, err := strconv.Atoi(step); err != nil || n < 1 || step[0] == '+' {
			return false
		}
	}
	if rng == "*" {
		return true
	}
	number := func(s string) (int, bool) {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			n, err := strconv.Atoi(s)
			return n, err == nil && n >= lo && n <= hi
		}
		for i, name := range names {
			if name != "" && strings.EqualFold(s, name) {
				return i, true
			}
		}
		return 0, false
	}
	first, last, isRange := strings.Cut(rng, "-")
	a, ok := number(first)
	if !ok {
		return false
	}
	if !isRange {
		return !stepped // `5/10`: Vixie cron drops the step
	}
	b, ok := number(last)
	return ok && a <= b
}
