package schedule

import (
	"math"
	"math/bits"
	"time"
)

// Wall-clock times are handled as civil (zone-less) seconds or minutes since
// 1970-01-01 00:00, the way a clock on the wall reads them; instants as Unix
// seconds. A slot is always a whole wall-clock minute.

const (
	minutesPerDay = 24 * 60
	// searchMonths bounds every search: a 400-year Gregorian cycle repeats
	// all calendars, so nothing is found later that is not found within it.
	searchMonths = 400 * 12
)

// Next returns the first slot strictly after after, in loc (UTC if nil),
// following the clock-change rules in the package documentation. It returns
// the zero Time if there is none within 400 years.
func (c *Cron) Next(after time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	// Slots are whole seconds, so "strictly after" is "at or after the next
	// whole second"; Unix() floors.
	lo := after.Unix() + 1
	if c.fixed {
		return c.nextFixed(lo, loc)
	}
	// Walk the zone periods (spans of constant UTC offset) from after; in
	// each, wall clock and instant differ by a constant, so the first
	// matching wall minute in the period is the answer if it lies inside it.
	for range searchMonths {
		off, _, end := period(lo, loc)
		w, ok := c.nextCivil(ceilDiv(lo+off, 60))
		if !ok {
			break
		}
		if u := w*60 - off; u < end {
			return time.Unix(u, 0).In(loc)
		}
		lo = end // the next period, from its first instant on
	}
	return time.Time{}
}

// Prev returns the most recent slot at or before before, in loc (UTC if
// nil): for a detector, the run that should have happened last. Prev and
// Next agree: no slot lies strictly between Prev(t) and Next(t). It returns
// the zero Time if there is none within 400 years.
func (c *Cron) Prev(before time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	hi := before.Unix()
	if c.fixed {
		return c.prevFixed(hi, loc)
	}
	for range searchMonths {
		off, start, _ := period(hi, loc)
		w, ok := c.prevCivil(floorDiv(hi+off, 60))
		if !ok {
			break
		}
		if u := w*60 - off; u >= start {
			return time.Unix(u, 0).In(loc)
		}
		hi = start - 1 // the previous period, from its last second back
	}
	return time.Time{}
}

// Vixie cron compares the wall clock at each wake-up with the minute it
// expected. A jump forward of under 3 hours (a spring-forward gap) runs the
// fixed-time jobs of every skipped minute at once; a jump back of up to 3
// hours and 1 minute runs no fixed-time job until the clock is past the
// minute it had reached (a fall-back's repeat runs once). Larger jumps are
// clock corrections: cron carries on from the new time, skipping a larger
// gap and running a larger repeat again.
const (
	maxCaughtUpGap   = 3 * 3600    // seconds; a gap this long or longer is skipped
	maxSkippedRepeat = 3*3600 + 60 // seconds; a repeat longer than this runs again
)

// fixedBounds applies that rule to the zone period that starts at start
// with offset off. from is the first wall-clock second of the period whose
// fixed-time slots run in it (earlier ones ran before a fall-back), and
// [gapLo, gapHi) the wall-clock seconds skipped at start whose slots run
// at start (empty unless start ends a spring-forward gap under 3 hours).
func fixedBounds(start, off int64, loc *time.Location) (from, gapLo, gapHi int64) {
	if start == math.MinInt64 {
		return math.MinInt64, 0, 0
	}
	_, p := time.Unix(start-1, 0).In(loc).Zone()
	prev := int64(p)
	switch d := off - prev; {
	case d > 0 && d < maxCaughtUpGap:
		return start + off, start + prev, start + off
	case d < 0 && -d <= maxSkippedRepeat:
		return start + prev, 0, 0
	}
	return start + off, 0, 0
}

// gapRuns reports whether a matching wall-clock minute lies in the wall
// seconds [lo, hi).
func (c *Cron) gapRuns(lo, hi int64) bool {
	if lo >= hi {
		return false
	}
	w, ok := c.nextCivil(ceilDiv(lo, 60))
	return ok && w*60 < hi
}

// nextFixed returns the first slot at or after the instant lo of a
// fixed-time expression, by zone periods as Next does, with fixedBounds'
// rule at each period's start.
func (c *Cron) nextFixed(lo int64, loc *time.Location) time.Time {
	for range searchMonths {
		off, start, end := period(lo, loc)
		from, gapLo, gapHi := fixedBounds(start, off, loc)
		if lo == start && c.gapRuns(gapLo, gapHi) {
			return time.Unix(start, 0).In(loc)
		}
		w, ok := c.nextCivil(ceilDiv(max(lo+off, from), 60))
		if !ok {
			break
		}
		if u := w*60 - off; u < end {
			return time.Unix(u, 0).In(loc)
		}
		lo = end
	}
	return time.Time{}
}

// prevFixed returns the last slot at or before the instant hi of a
// fixed-time expression.
func (c *Cron) prevFixed(hi int64, loc *time.Location) time.Time {
	for range searchMonths {
		off, start, _ := period(hi, loc)
		from, gapLo, gapHi := fixedBounds(start, off, loc)
		w, ok := c.prevCivil(floorDiv(hi+off, 60))
		if !ok {
			break
		}
		if w*60 >= from {
			return time.Unix(w*60-off, 0).In(loc)
		}
		if c.gapRuns(gapLo, gapHi) {
			return time.Unix(start, 0).In(loc)
		}
		hi = start - 1
	}
	return time.Time{}
}

// period returns the UTC offset in force at instant u (Unix seconds) and the
// span [start, end) around u that has this offset, with math.MinInt64 and
// math.MaxInt64 for no bound. It never returns a span that misses u:
// Time.ZoneBounds does so on the last day of leap years computed from a
// zone's TZ rule (2040 and later; golang/go#81583). Then a span of an hour
// (a minute if the offset changes within the hour) stands in; an offset does
// not change twice within one hour.
func period(u int64, loc *time.Location) (off, start, end int64) {
	t := time.Unix(u, 0).In(loc)
	_, o := t.Zone()
	off = int64(o)
	s, e := t.ZoneBounds()
	start, end = math.MinInt64, math.MaxInt64
	if !s.IsZero() {
		start = s.Unix()
	}
	if !e.IsZero() {
		end = e.Unix()
	}
	if start <= u && u < end {
		return off, start, end
	}
	start, end = u-3599, u+3600
	if _, o := time.Unix(start, 0).In(loc).Zone(); int64(o) != off {
		start = u
	}
	if _, o := time.Unix(end, 0).In(loc).Zone(); int64(o) != off {
		end = u + 1
	}
	return off, start, end
}

// nextCivil returns the first matching wall-clock minute at or after m.
func (c *Cron) nextCivil(m int64) (int64, bool) {
	z := floorDiv(m, minutesPerDay)
	r := int(m - z*minutesPerDay)
	h, mi := r/60, r%60
	for {
		nz, ok := c.nextDay(z)
		if !ok {
			return 0, false
		}
		if nz != z {
			z, h, mi = nz, 0, 0
		}
		for h < 24 {
			hs := c.hours &^ (1<<h - 1)
			if hs == 0 {
				break
			}
			if nh := bits.TrailingZeros32(hs); nh != h {
				h, mi = nh, 0
			}
			if ms := c.minutes &^ (1<<mi - 1); ms != 0 {
				return z*minutesPerDay + int64(h*60+bits.TrailingZeros64(ms)), true
			}
			h, mi = h+1, 0
		}
		z, h, mi = z+1, 0, 0
	}
}

// prevCivil returns the last matching wall-clock minute at or before m.
func (c *Cron) prevCivil(m int64) (int64, bool) {
	z := floorDiv(m, minutesPerDay)
	r := int(m - z*minutesPerDay)
	h, mi := r/60, r%60
	for {
		pz, ok := c.prevDay(z)
		if !ok {
			return 0, false
		}
		if pz != z {
			z, h, mi = pz, 23, 59
		}
		for h >= 0 {
			hs := c.hours & (1<<(h+1) - 1)
			if hs == 0 {
				break
			}
			if ph := 31 - bits.LeadingZeros32(hs); ph != h {
				h, mi = ph, 59
			}
			if ms := c.minutes & (1<<(mi+1) - 1); ms != 0 {
				return z*minutesPerDay + int64(h*60+63-bits.LeadingZeros64(ms)), true
			}
			h, mi = h-1, 59
		}
		z, h, mi = z-1, 23, 59
	}
}

// nextDay returns the first matching day (days since 1970-01-01) at or after z.
func (c *Cron) nextDay(z int64) (int64, bool) {
	y, m, d := civilFromDays(z)
	for range searchMonths {
		if c.months&(1<<m) != 0 {
			if ds := c.dayMask(y, m) &^ (1<<d - 1); ds != 0 {
				return daysFromCivil(y, m, bits.TrailingZeros32(ds)), true
			}
		}
		if d = 1; m == 12 {
			y, m = y+1, 1
		} else {
			m++
		}
	}
	return 0, false
}

// prevDay returns the last matching day at or before z.
func (c *Cron) prevDay(z int64) (int64, bool) {
	y, m, d := civilFromDays(z)
	for range searchMonths {
		if c.months&(1<<m) != 0 {
			if ds := c.dayMask(y, m) & (1<<(d+1) - 1); ds != 0 {
				return daysFromCivil(y, m, 31-bits.LeadingZeros32(ds)), true
			}
		}
		if d = 31; m == 1 {
			y, m = y-1, 12
		} else {
			m--
		}
	}
	return 0, false
}

func (c *Cron) dayMask(y int64, m int) uint32 {
	return c.days[weekday(daysFromCivil(y, m, 1))][monthLen(y, m)-28]
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (H. Hinnant's algorithm; no allocation, no time.Location).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekday returns the day of the week of day z, Sunday = 0.
func weekday(z int64) int { return int(floorMod(z+4, 7)) } // 1970-01-01 was a Thursday

func monthLen(y int64, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
