package detect

import (
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
