package detect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// alarms returns the flips to down or anomalous among flips.
func alarms(flips []beet.Flip) []beet.Flip {
	var out []beet.Flip
	for _, f := range flips {
		if f.To == beet.StatusDown || f.To == beet.StatusAnomalous {
			out = append(out, f)
		}
	}
	return out
}

// weekdayRuns returns a run at hh:mm in loc on every weekday from the
// Monday start for weeks, 0-3 minutes late, leaving out the days in skip.
func weekdayRuns(r *rand.Rand, start time.Time, weeks, hh, mm int, skip map[int]bool) []time.Time {
	var out []time.Time
	for d := range weeks * 7 {
		day := start.AddDate(0, 0, d)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday || skip[d] {
			continue
		}
		slot := time.Date(day.Year(), day.Month(), day.Day(), hh, mm, 0, 0, start.Location())
		out = append(out, slot.Add(time.Duration(r.Int64N(int64(3*time.Minute)))))
	}
	return out
}

// TestWeekdayJobOutage: a job at 06:30 Europe/Berlin on weekdays only,
// 0-3 minutes late. It arms within the stated bound (as a schedule, after
// about a week and a half), says so in words and as a cron line, raises
// nothing over weekends, and a four-day outage is flagged on its first
// missed run, within the grace (a tenth of a day) plus a minute.
func TestWeekdayJobOutage(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, berlin) // a Monday
	r := rand.New(rand.NewPCG(1, 1))
	skip := map[int]bool{22: true, 23: true, 24: true, 25: true} // Tue-Fri of the fourth week
	a := newAutoBeet("Europe/Berlin")
	for _, at := range weekdayRuns(r, start, 5, 6, 30, skip) {
		a.event(t, at, 1)
	}
	if len(a.flips) < 2 || a.flips[1].Kind != beet.FlipLearned || a.flips[1].At.After(start.Add(armBy)) {
		t.Fatalf("not armed within %s: %+v", armBy, a.flips)
	}
	al := alarms(a.flips)
	slot := time.Date(2026, 1, 27, 6, 30, 0, 0, berlin) // the first missed run
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(slot) || al[0].At.After(slot.Add(24*time.Hour/10+time.Minute)) {
		t.Fatalf("want one missed run flagged by %s: %+v", slot.Add(24*time.Hour/10+time.Minute), al)
	}
	w, ok := Watch(&a.b)
	if !ok || w.Model != "schedule" || w.Cron != "30 6 * * 1-5" || w.Timezone != "Europe/Berlin" || w.ArmedAt == nil ||
		!strings.HasPrefix(w.Description, "runs weekdays at 06:30 Europe/Berlin, usually 0-") {
		t.Fatalf("watching %+v", w)
	}
	t.Logf("%s; armed at %s", w.Description, w.ArmedAt)
}

// TestSilenceAlertsWhateverShape: a beet with two weeks of events, of any
// shape, that then goes silent for days is flagged within four days.
func TestSilenceAlertsWhateverShape(t *testing.T) {
	start := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC) // a Monday
	shapes := map[string]func(r *rand.Rand) []time.Time{
		"weekday job": func(r *rand.Rand) []time.Time { return weekdayRuns(r, start, 2, 6, 30, nil) },
		"slow Poisson (0.3 an hour)": func(r *rand.Rand) []time.Time {
			var out []time.Time
			for at := start; at.Before(start.Add(14 * 24 * time.Hour)); {
				at = at.Add(time.Duration(r.ExpFloat64() / 0.3 * float64(time.Hour)))
				out = append(out, at)
			}
			return out
		},
		"bursts of 1-20 hours apart": func(r *rand.Rand) []time.Time {
			var out []time.Time
			for at := start; at.Before(start.Add(14 * 24 * time.Hour)); {
				at = at.Add(time.Duration(r.ExpFloat64() * 3 * float64(time.Hour)))
				for i := range 1 + r.IntN(20) {
					out = append(out, at.Add(time.Duration(i)*5*time.Second))
				}
			}
			return out
		},
		"three times a day at odd hours": func(r *rand.Rand) []time.Time {
			var out []time.Time
			for d := range 14 {
				for _, h := range []time.Duration{2*time.Hour + 10*time.Minute, 9 * time.Hour, 19*time.Hour + 45*time.Minute} {
					out = append(out, start.AddDate(0, 0, d).Add(h+time.Duration(r.Int64N(int64(10*time.Minute)))))
				}
			}
			return out
		},
	}
	for name, gen := range shapes {
		events := gen(rand.New(rand.NewPCG(2, 2)))
		a := newAutoBeet("UTC")
		for _, at := range events {
			a.event(t, at, 1)
		}
		last := events[len(events)-1]
		a.until(t, last.Add(4*24*time.Hour))
		if al := alarms(a.since(last)); len(al) == 0 || al[0].To != beet.StatusDown {
			t.Errorf("%s: silent for 4 days after %s, no alarm: %+v", name, last, a.flips)
		} else {
			t.Logf("%s: %s after the last event: %s", name, al[0].At.Sub(last), al[0].Reason)
		}
	}
}

// TestHourlyJobLateRuns: an hourly job whose runs end (and ping) 0-2
// minutes after the hour raises nothing over six weeks; a missed run is
// flagged within the grace plus a minute, the grace at least a tenth of
// the period; a run that came late (after its alarm) widens the grace.
func TestHourlyJobLateRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	missed := start.Add(6 * 7 * 24 * time.Hour).Add(10 * time.Hour)
	late := missed.Add(5 * time.Hour)
	a := newAutoBeet("UTC")
	var grace time.Duration
	for at := start; at.Before(missed.Add(10 * time.Hour)); at = at.Add(time.Hour) {
		switch {
		case at.Equal(missed):
			m, _ := LoadRateModel(a.b.Model, time.UTC)
			grace = m.Grace()
			continue
		case at.Equal(late):
			a.event(t, at.Add(20*time.Minute), 1)
			continue
		}
		a.event(t, at.Add(time.Duration(r.Int64N(int64(2*time.Minute)))), 1)
	}
	if grace < 6*time.Minute {
		t.Fatalf("grace %s, under a tenth of the period", grace)
	}
	al := alarms(a.flips)
	if len(al) != 2 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(missed) || al[0].At.After(missed.Add(grace+time.Minute)) {
		t.Fatalf("want the missed run flagged by %s (grace %s), then the late one: %+v", missed.Add(grace+time.Minute), grace, al)
	}
	m, _ := LoadRateModel(a.b.Model, time.UTC)
	if !m.Scheduled() || m.Grace() < 20*time.Minute {
		t.Fatalf("after a run 20 min late: scheduled %v, grace %s", m.Scheduled(), m.Grace())
	}
	t.Logf("grace %s, then %s after a run 20 min late; %s", grace, m.Grace(), m.Describe(late))
}

// TestCalendarShapes: shapes of schedule are learned, said in words and as
// a cron line; a start and an end ping per run, and an occasional extra
// ping, keep the schedule.
func TestCalendarShapes(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, berlin)
	cases := []struct {
		name        string
		events      func(r *rand.Rand) []time.Time
		words, cron string
	}{
		{"working hours", func(r *rand.Rand) []time.Time {
			var out []time.Time
			for d := range 21 {
				day := start.AddDate(0, 0, d)
				if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
					continue
				}
				for h := 9; h <= 17; h++ {
					out = append(out, time.Date(2026, 1, 5+d, h, 0, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(40*time.Second)))))
				}
			}
			return out
		}, "runs every hour at :00 from 09:00 to 17:00 weekdays Europe/Berlin", "0 9-17 * * 1-5"},
		{"every 5 min", func(r *rand.Rand) []time.Time {
			var out []time.Time
			for at := start; at.Before(start.Add(10 * 24 * time.Hour)); at = at.Add(5 * time.Minute) {
				out = append(out, at.Add(time.Duration(r.Int64N(int64(5*time.Second)))))
			}
			return out
		}, "runs every 5 min Europe/Berlin", "*/5 * * * *"},
		{"start and end pings, an extra now and then", func(r *rand.Rand) []time.Time {
			var out []time.Time
			for d := range 21 {
				run := time.Date(2026, 1, 5+d, 2, 0, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(time.Minute))))
				out = append(out, run, run.Add(12*time.Minute+time.Duration(r.Int64N(int64(3*time.Minute)))))
				if d%6 == 5 {
					out = append(out, run.Add(9*time.Hour)) // a run by hand
				}
			}
			return out
		}, "runs every day at 02:00 Europe/Berlin", "0 2 * * *"},
		{"weekly on Sunday", func(r *rand.Rand) []time.Time {
			var out []time.Time
			for w := range 8 { // Jan 4, 2026 is a Sunday
				out = append(out, time.Date(2026, 1, 4+7*w, 3, 15, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(time.Minute)))))
			}
			return out
		}, "runs weekly on Sundays at 03:15 Europe/Berlin", "15 3 * * 0"},
	}
	for _, c := range cases {
		a := newAutoBeet("Europe/Berlin")
		for _, at := range c.events(rand.New(rand.NewPCG(4, 4))) {
			a.event(t, at, 1)
		}
		w, ok := Watch(&a.b)
		if !ok || w.Model != "schedule" || !strings.HasPrefix(w.Description, c.words) || w.Cron != c.cron {
			t.Errorf("%s: watching %+v", c.name, w)
		}
		if al := alarms(a.flips); len(al) > 0 {
			t.Errorf("%s: alarms %+v", c.name, al)
		}
		t.Logf("%s: %s; %s", c.name, w.Description, w.Cron)
	}
}

// TestDSTWrongZone: a job at 06:30 Europe/Berlin on a beet left at UTC.
// When Berlin's clocks go forward and back, every run comes an hour
// earlier or later in UTC: the schedule follows, raises nothing, and
// suggests Europe/Berlin.
func TestDSTWrongZone(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := rand.New(rand.NewPCG(5, 5))
	a := newAutoBeet("UTC")
	for d := range 300 { // Jan 2026 to Oct 2026: both changes
		run := time.Date(2026, 1, 5+d, 6, 30, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(2 * time.Minute))))
		a.event(t, run, 1)
	}
	if al := alarms(a.flips); len(al) > 0 {
		t.Fatalf("alarms across DST: %+v", al)
	}
	m, _ := LoadRateModel(a.b.Model, time.UTC)
	if !m.Scheduled() || m.SuggestedZone() != "Europe/Berlin" || m.Grace() > 3*time.Hour {
		t.Fatalf("scheduled %v, suggested zone %q, grace %s", m.Scheduled(), m.SuggestedZone(), m.Grace())
	}
}

// TestDSTWrongZoneRates: a business stream that follows the working day
// in Berlin (busy 09:00-18:00 on weekdays, quiet otherwise), on a beet
// left at UTC. When Berlin's clocks go forward the whole curve moves an
// hour earlier in UTC; no drop, surge or silence may be flagged for it.
func TestDSTWrongZoneRates(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := rand.New(rand.NewPCG(6, 6))
	a := newAutoBeet("UTC")
	start := time.Date(2026, 2, 9, 0, 0, 0, 0, berlin)
	for at := start; at.Before(start.AddDate(0, 0, 8*7)); {
		at = at.Add(time.Duration(r.ExpFloat64() / 120 * float64(time.Hour)))
		local := at.In(berlin)
		busy := local.Weekday() != time.Saturday && local.Weekday() != time.Sunday && local.Hour() >= 9 && local.Hour() < 18
		if busy || r.IntN(40) == 0 { // 120 an hour, else 3 (thinned)
			a.event(t, at, 1)
		}
	}
	if al := alarms(a.flips); len(al) > 0 {
		t.Fatalf("alarms: %+v", al)
	}
}

// TestWeekdayJobConfirmedAfterAWeek: a weekday job is confirmed once a
// run came on each of Monday to Friday and none on the weekend, so a run
// it misses in its second week (day 8) is flagged, within the grace plus
// a minute; before, weekday jobs were confirmed after 13-19 days. Whatever
// day it was first seen on: a job first seen on a Thursday had its Monday
// run taken for a new period of three days, and one whose first run was
// an hour off its time (set up by hand) a period of 22 h 43 min.
func TestWeekdayJobConfirmedAfterAWeek(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, c := range []struct {
		name     string
		start    time.Time // the first day seen
		firstOff time.Duration
	}{
		{"Monday", time.Date(2026, 1, 5, 0, 0, 0, 0, berlin), 0},
		{"Thursday", time.Date(2026, 1, 8, 0, 0, 0, 0, berlin), 0},
		{"Wednesday, the first run late", time.Date(2026, 1, 7, 0, 0, 0, 0, berlin), 77 * time.Minute},
	} {
		r := rand.New(rand.NewPCG(3, 3))
		a := newAutoBeet("Europe/Berlin")
		skip := map[int]bool{8: true}
		runs := weekdayRuns(r, c.start, 3, 6, 30, skip)
		runs[0] = runs[0].Add(c.firstOff)
		for _, at := range runs {
			a.event(t, at, 1)
		}
		slot := time.Date(c.start.Year(), c.start.Month(), c.start.Day()+8, 6, 30, 0, 0, berlin)
		al := alarms(a.flips)
		if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(slot) || al[0].At.After(slot.Add(24*time.Hour/10+time.Minute)) {
			t.Errorf("first seen %s: want the missed run of %s (day 8) flagged by %s, and nothing else: %+v",
				c.name, slot.Format("Mon 2 Jan"), slot.Add(24*time.Hour/10+time.Minute), al)
		}
	}
}

// TestDailyJobMissingFirstWeekend: a daily job whose first weekend's two
// runs did not come is taken for a weekday job until a weekend run comes
// again; that run is on the grid, and nothing is flagged.
func TestDailyJobMissingFirstWeekend(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := rand.New(rand.NewPCG(5, 5))
	a := newAutoBeet("Europe/Berlin")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, berlin) // a Monday
	for d := range 28 {
		if d == 5 || d == 6 {
			continue
		}
		slot := time.Date(2026, 1, 5+d, 6, 30, 0, 0, berlin)
		a.event(t, slot.Add(time.Duration(r.Int64N(int64(3*time.Minute)))), 1)
	}
	if al := alarms(a.flips); len(al) != 0 {
		t.Fatalf("want nothing flagged: %+v", al)
	}
	if w, ok := Watch(&a.b); !ok || w.Cron != "30 6 * * *" || w.ArmedAt == nil || w.ArmedAt.After(start.Add(armBy)) {
		t.Fatalf("watching %+v", w)
	}
}
