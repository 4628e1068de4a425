package detect

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// Zones whose clock changes a job may follow while its beet is set to
// another zone (often UTC): one per distinct rule, most used first. A
// whole-hour shift of a daily schedule is followed only when one of them
// (relative to the beet's own zone) changed its clocks by that hour just
// before, so a job that simply moved is not taken for a clock change.
var dstZoneNames = []string{
	"Europe/Berlin", "Europe/London", "America/New_York", "America/Chicago",
	"America/Denver", "America/Los_Angeles", "America/Halifax", "Australia/Sydney",
	"Pacific/Auckland", "America/Santiago", "Asia/Jerusalem", "America/Havana",
}

var (
	dstZones     []*time.Location
	dstZonesOnce sync.Once
)

func candidateZones() []*time.Location {
	dstZonesOnce.Do(func() {
		for _, n := range dstZoneNames {
			if loc, err := loadLocation(n); err == nil {
				dstZones = append(dstZones, loc)
			}
		}
	})
	return dstZones
}

// dstZone returns a candidate zone whose offset, relative to loc's,
// changed between from and to by −shift (runs shift seconds later in loc
// when that zone's clocks go back an hour), or nil.
func dstZone(loc *time.Location, from, to, shift int64) *time.Location {
	change := func(z *time.Location) int64 {
		_, a := time.Unix(from, 0).In(z).Zone()
		_, b := time.Unix(to, 0).In(z).Zone()
		return int64(b - a)
	}
	own := change(loc)
	for _, z := range candidateZones() {
		if change(z)-own == -shift {
			return z
		}
	}
	return nil
}

func dstNear(loc *time.Location, from, to, shift int64) bool {
	return dstZone(loc, from, to, shift) != nil
}

// SuggestedZone returns a zone the beet's runs follow better than its own,
// when the schedule followed a whole-hour shift of its runs at a clock
// change of that zone: "" if none. Zones that change their clocks on the
// same day (all of the EU) cannot be told apart by the runs; the first of
// dstZoneNames is named.
func (m *RateModel) SuggestedZone() string {
	if m.shiftDay == 0 {
		return ""
	}
	day, shift := int64(m.shiftDay), int64(3600)
	if day < 0 {
		day, shift = -day, -3600
	}
	if z := dstZone(m.loc, (day-8)*86400, (day+1)*86400, shift); z != nil {
		return z.String()
	}
	return ""
}

// A dstChange is a clock change of a candidate zone: its instant and the
// change of the UTC offset, seconds.
type dstChange struct{ at, delta int64 }

var (
	dstChanges     []dstChange
	dstChangesOnce sync.Once
)

// candidateChanges lists the candidate zones' clock changes from 2000 to
// 2050 in time order.
func candidateChanges() []dstChange {
	dstChangesOnce.Do(func() {
		from, to := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, z := range candidateZones() {
			for t := from; t.Before(to); {
				_, end := t.In(z).ZoneBounds()
				if end.IsZero() || !end.After(t) {
					break
				}
				_, a := end.Add(-time.Second).In(z).Zone()
				_, b := end.In(z).Zone()
				if a != b {
					dstChanges = append(dstChanges, dstChange{end.Unix(), int64(b - a)})
				}
				t = end
			}
		}
		slices.SortFunc(dstChanges, func(x, y dstChange) int { return cmp.Compare(x.at, y.at) })
	})
	return dstChanges
}

// blurred reports whether, at unix, a candidate zone changed its clock
// (relative to the beet's zone) within dstBlurSpan. The answer is cached
// with the span of time it holds for, as walks ask hour after hour.
func (m *RateModel) blurred(unix int64) bool {
	if unix >= m.blurFrom && unix < m.blurTo {
		return m.blurOn
	}
	ch := candidateChanges()
	dstBlurSpan := int64(m.p.DSTFollow / time.Second)
	i, _ := slices.BinarySearchFunc(ch, unix-dstBlurSpan+1, func(c dstChange, t int64) int { return cmp.Compare(c.at, t) })
	// Changes in (unix-span, unix] blur unix; the answer holds until the
	// first of them leaves the span or the next one comes.
	m.blurOn, m.blurFrom, m.blurTo = false, unix, math.MaxInt64
	if i > 0 {
		m.blurFrom = max(unix, ch[i-1].at+dstBlurSpan)
	}
	for j := i; j < len(ch); j++ {
		if ch[j].at > unix {
			m.blurTo = min(m.blurTo, ch[j].at)
			break
		}
		m.blurTo = min(m.blurTo, ch[j].at+dstBlurSpan)
		if !m.blurOn {
			_, a := time.Unix(ch[j].at-86400, 0).In(m.loc).Zone()
			_, b := time.Unix(ch[j].at+86400, 0).In(m.loc).Zone()
			m.blurOn = ch[j].delta != int64(b-a)
		}
	}
	return m.blurOn
}

// rateRange is the rate at unix and, while blurred, the lowest and the
// highest of it and the same hour's neighbours.
func (m *RateModel) rateRange(unix int64) (lo, hi float64) {
	r := m.rateAt(unix)
	lo, hi = r, r
	if !m.blurred(unix) {
		return lo, hi
	}
	for _, d := range []int64{-3600, 3600} {
		if x := float64(m.rate[m.bucket(unix+d)]); x >= 0 {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	return lo, hi
}
