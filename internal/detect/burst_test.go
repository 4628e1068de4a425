package detect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// burstyEvents returns bursts of 1-20 events 5 s apart, bursts arriving
// at perHour (Poisson), from start for days.
func burstyEvents(r *rand.Rand, start time.Time, perHour float64, days int) []time.Time {
	var out []time.Time
	end := start.AddDate(0, 0, days)
	for at := start; ; {
		at = at.Add(time.Duration(r.ExpFloat64() / perHour * float64(time.Hour)))
		if !at.Before(end) {
			return out
		}
		for i := range 1 + r.IntN(20) {
			out = append(out, at.Add(time.Duration(i)*5*time.Second))
		}
	}
}

// TestBurstyWebhookQuiet: a webhook that fires bursts of 1-20 events
// three times an hour, starting on a Saturday (so its first weekdays are
// seen once before it could arm early), raises nothing over four weeks:
// ordinary gaps between bursts are no silence and big bursts no surge. It
// is watched as bursts, and a day's outage is then flagged as a silence
// within a few hours.
func TestBurstyWebhookQuiet(t *testing.T) {
	start := time.Date(2026, 2, 7, 0, 0, 0, 0, time.UTC) // a Saturday
	r := rand.New(rand.NewPCG(3, 5))
	a := newAutoBeet("UTC")
	for _, at := range burstyEvents(r, start, 3, 28) {
		a.event(t, at, 1)
	}
	if al := alarms(a.flips); len(al) > 0 {
		t.Fatalf("alarms on ordinary bursts: %+v", al)
	}
	m, err := LoadRateModel(a.b.Model, time.UTC)
	if err != nil || !m.bursty() || m.finer() == nil {
		t.Fatalf("not watched as bursts: %v", err)
	}
	if d := m.Describe(time.UnixMicro(m.last)); !strings.HasPrefix(d, "bursts of about ") {
		t.Errorf("described as %q", d)
	}
	if w, ok := Watch(&a.b); !ok || w.Model != "bursts" || w.AlertAfter <= 0 {
		t.Errorf("the API says it watches %+v", w)
	}
	last := time.UnixMicro(m.last)
	a.until(t, last.Add(24*time.Hour))
	al := alarms(a.flips)
	if len(al) != 1 || al[0].Kind != beet.FlipSilence || al[0].At.Sub(last) > 6*time.Hour {
		t.Fatalf("want one silence within 6 h of the last burst (%s): %+v", last, al)
	}
	t.Logf("%s", al[0].Reason)
}

// TestBurstUnitLearnedEarly: the burst unit is the plain average of the
// first clusters' calls, so a few days of bursts of 1-20 events give
// about 10.5, not a slowly growing figure that makes the first big
// bursts look like surges.
func TestBurstUnitLearnedEarly(t *testing.T) {
	start := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	m := NewRateModel(time.UTC)
	for _, at := range burstyEvents(rand.New(rand.NewPCG(7, 7)), start, 0.3, 7) {
		m.Observe(at, 1)
	}
	if m.burst < 7 || m.burst > 14 {
		t.Fatalf("burst unit %.1f after a week of bursts of 1-20 (mean 10.5)", m.burst)
	}
}

// TestWeekdayJobStartingThursday: a weekday job first seen on a Thursday
// is learned as a schedule (a daily candidate goes on over the weekend)
// and a missed run is flagged as one.
func TestWeekdayJobStartingThursday(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, riga) // a Thursday
	r := rand.New(rand.NewPCG(2, 2))
	a := newAutoBeet("Europe/Riga")
	for _, at := range weekdayRuns(r, start, 5, 7, 10, map[int]bool{26: true}) { // Tue of the fourth week
		a.event(t, at, 1)
	}
	al := alarms(a.flips)
	slot := time.Date(2026, 1, 27, 7, 10, 0, 0, riga)
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(slot) || al[0].At.After(slot.Add(24*time.Hour/10+time.Minute)) {
		t.Fatalf("want the missed run of %s flagged within its grace: %+v", slot, al)
	}
}

// TestTwiceDailyJob: a job at 04:40 and 14:10 Europe/Berlin (0-4 min
// late) is learned as a daily schedule with a second run, armed within
// the bound, across the autumn clock change, raising nothing; a missed
// afternoon run is flagged as missed, and so is a missed morning run,
// whose afternoon run is then taken as the second run, not as a very
// late first one. (Flagged within the grace plus the runs' spread of the
// slot: the learned time sits within the spread.)
func TestTwiceDailyJob(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := rand.New(rand.NewPCG(4, 4))
	a := newAutoBeet("Europe/Berlin")
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, berlin)
	missedPM := time.Date(2026, 10, 30, 14, 10, 0, 0, berlin)
	missedAM := time.Date(2026, 11, 5, 4, 40, 0, 0, berlin)
	for d := range 45 {
		for _, hm := range [][2]int{{4, 40}, {14, 10}} {
			slot := time.Date(2026, 10, 1+d, hm[0], hm[1], 0, 0, berlin)
			if slot.Equal(missedPM) || slot.Equal(missedAM) {
				continue
			}
			a.event(t, slot.Add(time.Duration(r.Int64N(int64(4*time.Minute)))), 1)
		}
	}
	al := alarms(a.flips)
	if len(al) != 2 {
		t.Fatalf("want the two missed runs flagged, nothing else: %+v", al)
	}
	for i, slot := range []time.Time{missedPM, missedAM} {
		if al[i].Kind != beet.FlipMissedRun || al[i].At.Before(slot) || al[i].At.After(slot.Add(24*time.Hour/10+5*time.Minute)) {
			t.Errorf("missed run at %s: flagged %s (%s)", slot, al[i].At, al[i].Reason)
		}
	}
	if len(a.flips) < 2 || a.flips[1].At.After(start.Add(armBy+24*time.Hour)) {
		t.Errorf("not armed within %s: %+v", armBy, a.flips)
	}
}

// TestStartEndOverrun: an hourly job pinging at its start and, 2 to 2.7
// minutes later, at its end; one run's end does not come: flagged a
// quarter of an hour after the run started, and never otherwise.
func TestStartEndOverrun(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	a := newAutoBeet("UTC")
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	stuck := start.Add(20*24*time.Hour + 7*time.Hour)
	for h := range 24 * 28 {
		slot := start.Add(time.Duration(h)*time.Hour + 5*time.Minute)
		a.event(t, slot.Add(time.Duration(r.Int64N(int64(3*time.Second)))), 1)
		if slot.Equal(stuck.Add(5 * time.Minute)) {
			continue
		}
		a.event(t, slot.Add(2*time.Minute+time.Duration(r.Int64N(int64(40*time.Second)))), 1)
	}
	al := alarms(a.flips)
	run := stuck.Add(5 * time.Minute)
	if len(al) != 1 || al[0].Kind != beet.FlipOverrun || al[0].At.Before(run.Add(10*time.Minute)) || al[0].At.After(run.Add(20*time.Minute)) {
		t.Fatalf("want one overrun 15 min after the run of %s: %+v", run, al)
	}
}

// TestArmedModelKeepsWatching: a busy beet armed early by code that did
// not count the dispersion's hours (the count reads 0 in its stored
// model) still has a deadline at its next event.
func TestArmedModelKeepsWatching(t *testing.T) {
	a := newAutoBeet("UTC")
	start := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	times := poissonTimes(start, 20, 20*24*3)
	for _, at := range times {
		a.event(t, at, 1)
	}
	if a.b.Status != beet.StatusUp || a.b.DueAt == nil {
		t.Fatalf("a busy beet is not armed after 3 days: %s", a.b.Status)
	}
	m, err := LoadRateModel(a.b.Model, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	m.dispHourN = 0 // as stored before the count of hours
	b, _ := m.MarshalBinary()
	a.b.Model = b
	a.event(t, times[len(times)-1].Add(time.Minute), 1)
	if a.b.Status != beet.StatusUp || a.b.DueAt == nil {
		t.Fatalf("stopped watching: %s, deadline %v", a.b.Status, a.b.DueAt)
	}
}

// TestTwiceDailyNearTwelveHours: a job run twice a day at two times not
// quite 12 h apart (near 13:20 and 01:40 Berlin time, 0-60 min late)
// averaged "every 12 h 18 min" over its first two gaps; learned as that, it
// drifted off its runs and flagged a missed run every day from Nov 1. The
// stream is the judge's `-seed 4 -dump cron-twice-daily/clean/11`. It
// raises nothing now.
func TestTwiceDailyNearTwelveHours(t *testing.T) {
	s := readDump(t, "testdata/twice-daily-near-12h.csv")
	a := s.replay(t, 6*time.Hour)
	if al := alarms(a.flips); len(al) != 0 {
		t.Fatalf("a twice-daily job that ran every time raised %d alarms, the first: %s (%s)", len(al), al[0].At, al[0].Reason)
	}
}

// TestHourlyAfterRetryLoop: an hourly job whose retry loop sent an event
// every 12 s for 3 h opened a surge (excused); its hours were learnt
// unclipped while the surge was open, so the schedule was lost and the
// next days' single runs an hour read as drops (5 false alarms). The
// stream is the judge's `-seed 16 -dump "cron-hourly/a retry loop: an
// event every 12 s for 3 h/8"`. Nothing is raised after the loop now.
func TestHourlyAfterRetryLoop(t *testing.T) {
	s := readDump(t, "testdata/hourly-retry-loop.csv")
	a := s.replay(t, time.Minute)      // the stream ends here: no later run is due to it
	excusedEnd := s.end.Add(time.Hour) // the judge excuses the incident and an hour after it
	for _, al := range alarms(a.flips) {
		if al.At.After(excusedEnd) {
			t.Fatalf("an hourly job that ran every hour after its retry loop raised an alarm at %s (%s)", al.At, al.Reason)
		}
	}
}

// TestBurstyReadingHolds: bursts of 1-20 events at 5 an hour, whose
// busiest learned hours bring about as many events as put B at bursty's
// bound (burstyFactor × e^(rate × clusterGap)), are read one way from
// their second week on: once at most, not in bursts and in events by
// turns as B and the busiest rate wander by a few percent (read afresh at
// every event, 109 times in four weeks: the CUSUMs' unit, the watch and
// the words on the beet page with it).
func TestBurstyReadingHolds(t *testing.T) {
	start := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	a := newAutoBeet("UTC")
	var readings []bool
	for _, at := range burstyEvents(rand.New(rand.NewPCG(11, 3)), start, 5, 35) {
		a.event(t, at, 1)
		if at.Sub(start) < 7*24*time.Hour {
			continue
		}
		m, err := LoadRateModel(a.b.Model, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if b := m.bursty(); len(readings) == 0 || b != readings[len(readings)-1] {
			readings = append(readings, b)
		}
	}
	if len(readings) > 2 {
		t.Fatalf("read as bursty and not by turns: %d readings in four weeks", len(readings))
	}
}
