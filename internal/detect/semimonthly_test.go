package detect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// TestSemiMonthlyJob: a job on two days of each month (`0 6 1,15 * *`,
// `0 6 10,25 * *`, `0 6 14,28 * *`), first seen in any month, is watched
// as such, raises nothing over a year across both clock changes, and its
// missed run is flagged within its grace. Its gaps are 13 to 17 days:
// read as "every 14 days" its longer gaps were flagged, and left to the
// fallback a missed run was never flagged (a month's silence at twice its
// longest gap). A job on the 15th and the last day, or on three days of
// the month, raises nothing; one read as monthly is followed onto a
// second day.
func TestSemiMonthlyJob(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, c := range []struct {
		name       string
		days       func(y int, m time.Month) []int
		cron, says string
		months     int           // the missed run is the 6th-last
		at, spread time.Duration // each run pings at+[0, spread) on the wall clock
	}{
		{"0 6 1,15 * *", func(int, time.Month) []int { return []int{1, 15} }, "0 6 1,15 * *", "on the 1st and 15th of each month at 06:00", 14, 6 * time.Hour, 3 * time.Minute},
		{"0 6 10,25 * *", func(int, time.Month) []int { return []int{10, 25} }, "0 6 10,25 * *", "on the 10th and 25th of each month at 06:00", 14, 6 * time.Hour, 3 * time.Minute},
		{"0 6 14,28 * *", func(int, time.Month) []int { return []int{14, 28} }, "0 6 14,28 * *", "on the 14th and 28th of each month at 06:00", 14, 6 * time.Hour, 3 * time.Minute},
		// Pings either side of midnight: a run at 00:04 is the day before's.
		{"55 23 1,16 * *, 0-10 min late", func(int, time.Month) []int { return []int{1, 16} }, "", "on the 1st and 16th of each month at 23:5", 14, 23*time.Hour + 55*time.Minute, 10 * time.Minute},
	} {
		for first := range 12 {
			var slots []time.Time
			for m := range c.months {
				y, mo := 2026, time.Month(first+1+m)
				for _, d := range c.days(y, mo) {
					slots = append(slots, time.Date(y, mo, d, int(c.at.Hours()), int(c.at.Minutes())%60, 0, 0, berlin))
				}
			}
			last := len(slots) - 2
			missed := slots[last-6]
			r := rand.New(rand.NewPCG(uint64(first), 23))
			a := newAutoBeet("Europe/Berlin")
			for i, at := range slots[:last] {
				if i != last-6 {
					a.event(t, at.Add(time.Duration(r.Int64N(int64(c.spread)))), 1)
				}
			}
			w, _ := Watch(&a.b)
			al := alarms(a.flips)
			if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(missed) || al[0].At.After(missed.Add(3*time.Hour)) {
				logFlips(t, a.flips, berlin)
				t.Errorf("%s from %s: want the run of %s flagged within 3 h, and nothing else", c.name, slots[0].Format("Jan 2"), missed)
			}
			if w.Model != "schedule" || c.cron != "" && w.Cron != c.cron || !strings.Contains(w.Description, c.says) {
				t.Errorf("%s from %s: watching %+v", c.name, slots[0].Format("Jan 2"), w)
			}
			if w.Cron != "" {
				if _, err := schedule.ParseCron(w.Cron); err != nil {
					t.Errorf("the cron line %q cannot make a cron beet: %v", w.Cron, err)
				}
			}
		}
	}
	// The 15th and the last day: the last day is told only by a month of
	// 29 or 30 days next to a run 15 days off (dayOfMonth), so the job may
	// stay irregular for a year; it raises nothing meanwhile.
	for first := range 12 {
		a := newAutoBeet("Europe/Berlin")
		for m := range 26 {
			y, mo := 2026, time.Month(first+1+m)
			for _, d := range []int{15, time.Date(y, mo+1, 0, 12, 0, 0, 0, time.UTC).Day()} {
				a.event(t, time.Date(y, mo, d, 6, 1, 0, 0, berlin), 1)
			}
		}
		if al := alarms(a.flips); len(al) != 0 {
			logFlips(t, a.flips, berlin)
			t.Errorf("the 15th and the last day from month %d: %d alarms, want none", first+1, len(al))
		}
	}
	// A job that missed its run of August 15 while it was learned, read
	// as monthly on the 1st: its runs on the 15th are a second day once
	// two months had them, and the missed run of December 15 is flagged.
	a := newAutoBeet("Europe/Berlin")
	for m := range 6 {
		for _, d := range []int{1, 15} {
			if at := time.Date(2026, time.Month(8+m), d, 6, 0, 0, 0, berlin); d != 15 || at.Month() != 8 && at.Month() != 12 {
				a.event(t, at.Add(time.Minute), 1) // not August 15 (learning) nor December 15 (the missed run)
			}
		}
	}
	missed := time.Date(2026, 12, 15, 6, 0, 0, 0, berlin)
	if al := alarms(a.flips); len(al) != 1 || al[0].At.Before(missed) || al[0].At.After(missed.Add(3*time.Hour)) ||
		!strings.Contains(al[0].Reason, "on the 1st and 15th of each month") {
		logFlips(t, a.flips, berlin)
		t.Errorf("monthly, then the 15th too: want the run of %s flagged within 3 h, and nothing else", missed)
	}
	// Cron's `0 6 */14 * *` runs on the 1st, 15th and 29th: no two days
	// hold it, and it raises nothing (its third run is no extra).
	for first := range 12 {
		a := newAutoBeet("Europe/Berlin")
		for m := range 14 {
			for _, d := range []int{1, 15, 29} {
				if at := time.Date(2026, time.Month(first+1+m), d, 6, 0, 0, 0, berlin); at.Day() == d {
					a.event(t, at.Add(time.Minute), 1)
				}
			}
		}
		if al := alarms(a.flips); len(al) != 0 {
			logFlips(t, a.flips, berlin)
			t.Errorf("*/14 from month %d: %d alarms, want none", first+1, len(al))
		}
	}
}
