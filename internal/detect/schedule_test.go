package detect

import (
	"bufio"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// dumpedStream is a stream the judge dumped (`go run ./cmd/detectjudge
// -dump family/incident/N`): the beet's zone, its events, and the
// incident the judge injected (zero times for a clean stream).
type dumpedStream struct {
	zone       string
	events     []time.Time
	start, end time.Time
}

var (
	dumpHeader   = regexp.MustCompile(`^# .*: beet zone (\S+),`)
	dumpIncident = regexp.MustCompile(`^# incident ".*": (\S+) to (\S+) `)
)

func readDump(t *testing.T, path string) dumpedStream {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s dumpedStream
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := dumpHeader.FindStringSubmatch(line); m != nil {
			s.zone = m[1]
		}
		if m := dumpIncident.FindStringSubmatch(line); m != nil {
			s.start, _ = time.Parse(time.RFC3339, m[1])
			s.end, _ = time.Parse(time.RFC3339, m[2])
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		at, n, _ := strings.Cut(line, ",")
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatal(err)
		}
		if k, err := strconv.Atoi(n); err != nil || k != 1 {
			t.Fatalf("%s: want one event a line: %q", path, line)
		}
		s.events = append(s.events, ts)
	}
	if s.zone == "" {
		t.Fatalf("%s: no zone in the header", path)
	}
	return s
}

// replay runs the whole stream through a new auto beet, and its deadlines
// up to after past the last event.
func (s dumpedStream) replay(t *testing.T, after time.Duration) *autoBeet {
	t.Helper()
	last := s.events[len(s.events)-1]
	a := s.feed(t, last)
	a.until(t, last.Add(after))
	return a
}

// feed runs the stream's events up to to (inclusive) through a new auto
// beet.
func (s dumpedStream) feed(t *testing.T, to time.Time) *autoBeet {
	t.Helper()
	a := newAutoBeet(s.zone)
	for _, at := range s.events {
		if at.After(to) {
			break
		}
		a.event(t, at, 1)
	}
	return a
}

// TestStartEndLateRun: jobs that ping at the start and at the end of each
// run (hourly, the end under a minute after the start, so in the start's
// cluster; and daily, the end 1-50 min after), whose ends come at varying
// offsets, raise nothing for weeks; one run whose end comes hours late
// (the judge's `-dump 'startend-daily/late run/0'` and
// 'startend-hourly/late run/1', seed 1) is flagged as an overrun before
// its end arrives. Pairs used to need the same end offset, within a
// minute or a quarter, three runs in a row, which runs varying by a few
// percent of the period seldom give: such late runs went unflagged.
func TestStartEndLateRun(t *testing.T) {
	for _, path := range []string{"testdata/startend-hourly-late-run.csv", "testdata/startend-daily-late-run.csv"} {
		s := readDump(t, path)
		a := s.replay(t, time.Minute)
		al := alarms(a.flips)
		if len(al) != 1 || al[0].Kind != beet.FlipOverrun || al[0].At.Before(s.start) || !al[0].At.Before(s.end) {
			t.Errorf("%s: want one overrun between the late run's start %s and its end %s, got %d alarms", path, s.start, s.end, len(al))
			for _, f := range al {
				t.Logf("  %s %s: %s", f.At, f.Kind, f.Reason)
			}
		}
	}
}

// TestMonthlyJob: a job run monthly on the 7th (at 07:31 Riga time),
// whose runs report 0-21 h late (the judge's `-seed 6 -dump
// 'cron-monthly/missed 1 run/3'`), is learned as a monthly schedule from
// its third run, states it in words and as a cron line, and flags the
// missing November run within its grace (3 days, a tenth of a month).
// Before, a month's gap never made a schedule (seven runs are needed) and
// the beet stayed learning until its fifth event. And once the December
// run ended the outage, the fallback, which had learned no gap in the
// last three weeks (an outage teaches nothing), flagged a silence two
// hours later: it now keeps the longest gap it learned.
func TestMonthlyJob(t *testing.T) {
	s := readDump(t, "testdata/monthly-missed-run.csv")
	loc, _ := time.LoadLocation(s.zone)
	a := newAutoBeet(s.zone)
	for _, at := range s.events[:2] {
		a.event(t, at, 1)
	}
	if w, _ := Watch(&a.b); w.Model != "learning" || w.ArmsBy != nil || !strings.Contains(w.Description, "by its 5th event") {
		t.Fatalf("a month after the first event, with two: %+v", w)
	}
	a.event(t, s.events[2], 1)
	w, ok := Watch(&a.b)
	if !ok || w.Model != "schedule" || !strings.HasSuffix(w.Cron, " 7 * *") || !strings.HasPrefix(w.Description, "runs monthly on the 7th at ") {
		t.Fatalf("after three monthly runs: %+v", w)
	}
	if _, err := schedule.ParseCron(w.Cron); err != nil {
		t.Fatalf("the cron line %q cannot make a cron beet: %v", w.Cron, err)
	}
	for _, at := range s.events[3:] {
		a.event(t, at, 1)
	}
	a.until(t, s.events[len(s.events)-1].Add(30*24*time.Hour))
	al := alarms(a.flips)
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(s.start) || al[0].At.After(s.start.Add(4*24*time.Hour)) {
		for _, f := range al {
			t.Logf("  %s %s: %s", f.At.In(loc), f.Kind, f.Reason)
		}
		t.Fatalf("want one missed run within 4 days of %s, got %d alarms", s.start, len(al))
	}
}

// TestTwiceDailyPairStatesRunTime: a job run at about 06:50 and 18:26 New
// York time (the judge's `-dump 'cron-twice-daily/missed 1 run/5'`, seed
// 1) was learned as "every 12 h at :38", a grid each of its runs is a
// quarter of an hour off: its missed 06:50 run was flagged as due at
// 06:39, before the run's slot. Learned as a daily pair instead, the
// alarm states a time at or after the slot.
func TestTwiceDailyPairStatesRunTime(t *testing.T) {
	s := readDump(t, "testdata/twice-daily-missed-run.csv")
	loc, _ := time.LoadLocation(s.zone)
	a := s.feed(t, s.start)
	// Both times, in the order of the day: said as one run "with a second
	// ping about 11 h 36 min after each run", its morning run was "the
	// second run of the day" and its cron line named only the evening's.
	if w, _ := Watch(&a.b); !regexp.MustCompile(`^runs every day at 0[67]:\d\d and 18:\d\d America/New_York, `).MatchString(w.Description) || w.Cron != "" {
		t.Errorf("not learned as a twice-daily job: %s (cron %q)", w.Description, w.Cron)
	}
	m, _ := LoadRateModel(a.b.Model, loc) // the grace the alarm states
	a.until(t, s.end)
	al := alarms(a.flips)
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun {
		t.Fatalf("want one missed run, got %d alarms", len(al))
	}
	if stated := al[0].At.Add(-m.Grace()); stated.Before(s.start) || stated.After(s.start.Add(time.Hour)) {
		t.Errorf("the missed run of %s stated at %s (%s)", s.start.In(loc), stated.In(loc), al[0].Reason)
	}
}

// TestStepLaterStatesRunTime: a daily job moved hours later (the judge's
// `-dump 'schedule-change/missed 1 run/4'`, seed 1), and a job at a
// Berlin time on a UTC beet after the autumn change, its runs too spread
// for the hour to be followed (`-dump 'berlin-on-utc-daily/missed 1
// run/7'`): the slot followed the later runs 1/32 a run, and the missed
// run was stated before its slot, weeks on. Three runs later than twice
// the mean lateness move the slot to the earliest of them at once.
func TestStepLaterStatesRunTime(t *testing.T) {
	testStatedRunTime(t, "testdata/schedule-change-missed-run.csv", "testdata/berlin-on-utc-daily-missed-run.csv")
}

// TestDSTShiftAfterStrayLateRun: daily jobs at a Europe/Berlin time on a
// beet left at UTC, usually 0-30 min late, each with one stray run over an
// hour late weeks before the autumn change (seed 6 and 16 of detectjudge's
// berlin-on-utc-daily; the first misses the run of the day after the
// change, the second one a week later). The stray run no longer keeps the
// hour from being followed: the missed run is stated at its time, not an
// hour before it.
func TestDSTShiftAfterStrayLateRun(t *testing.T) {
	testStatedRunTime(t, "testdata/berlin-on-utc-daily-stray-late-autumn.csv", "testdata/berlin-on-utc-daily-stray-late-autumn-2.csv")
}

// TestMonthlyFirstRunDaysLate: a job monthly on the 28th-29th whose
// first run came two days late (Mar 1), then on Mar 29 and Apr 29: the
// first gap made a candidate "every 28 days", which the Apr 29 run missed
// by three days, so the job was learned only from its fifth run (seed 19 of
// detectjudge's cron-monthly, clean/0; its May 29 run removed here). The
// missing run is flagged, stated on May 29.
func TestMonthlyFirstRunDaysLate(t *testing.T) {
	testStatedRunTime(t, "testdata/monthly-first-run-late.csv")
}

// TestWeekdayJobFirstSeenFriday: a weekday job whose first run came on a
// Friday (seed 17 of detectjudge's cron-weekdays, stopped 4d/7) was
// confirmed only after 17 days: the Monday after made a candidate "every
// 3 days", which the runs a day apart broke again. The run of its third
// Wednesday, the first of four days stopped, is flagged at its time.
func TestWeekdayJobFirstSeenFriday(t *testing.T) {
	testStatedRunTime(t, "testdata/weekdays-friday-start.csv")
}

// testStatedRunTime replays each dump up to its incident and wants the
// missed run flagged, stated at most 2 h after the incident's slot and not
// before it.
func testStatedRunTime(t *testing.T, paths ...string) {
	t.Helper()
	for _, path := range paths {
		s := readDump(t, path)
		a := s.feed(t, s.start)
		m, _ := LoadRateModel(a.b.Model, time.UTC) // the grace the alarm states
		n := len(a.flips)
		a.until(t, s.end)
		al := alarms(a.flips[n:])
		if len(al) == 0 || al[0].Kind != beet.FlipMissedRun {
			t.Errorf("%s: want a missed run, got %d alarms", path, len(al))
			continue
		}
		if stated := al[0].At.Add(-m.Grace()); stated.Before(s.start) || stated.After(s.start.Add(2*time.Hour)) {
			t.Errorf("%s: the missed run of %s stated at %s (%s)", path, s.start, stated, al[0].Reason)
		}
	}
}

// TestWeekdayLateRunOnSaturday: a weekday job at 07:30 whose Friday run
// came only on Saturday (the judge's "late run" on cron-weekdays: late by
// up to most of the weekend) is flagged once, as Friday's missed run. The
// Saturday run made Saturday a day of the job, so the next two Saturdays
// were flagged as missed (two misses in a row make a day off again), and
// one that came hours after Saturday's slot taught a grace of hours.
func TestWeekdayLateRunOnSaturday(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, berlin) // a Monday
	friday := time.Date(2026, 1, 30, 7, 30, 0, 0, berlin)
	for _, late := range []time.Duration{24*time.Hour + 10*time.Minute, 30 * time.Hour} {
		r := rand.New(rand.NewPCG(3, 3))
		a := newAutoBeet("Europe/Berlin")
		sent := false
		for _, at := range weekdayRuns(r, start, 7, 7, 30, map[int]bool{25: true}) {
			if at.After(friday) && !sent {
				a.event(t, friday.Add(late), 1) // Friday's run, on Saturday
				sent = true
			}
			a.event(t, at, 1)
		}
		al := alarms(a.flips)
		if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || !strings.Contains(al[0].Reason, "Jan 30 07:3") {
			logFlips(t, a.flips, berlin)
			t.Fatalf("late %s: want Friday's run flagged once, got %d alarms", late, len(al))
		}
		w, ok := Watch(&a.b)
		if !ok || w.Cron != "30 7 * * 1-5" || w.GraceSeconds > 3*3600 {
			t.Fatalf("late %s: watching %+v", late, w)
		}
	}
}

// TestGraceSteady: the grace of an hourly job whose runs end 0-2 min
// after its slot does not swing from week to week: it is lateTail times
// the mean lateness, an EWMA that, of weight 1/8, swung by ±15% (1σ), so
// that the 1-in-100 very late run of such jobs, which the grace covers
// on average, was flagged as missed about once in 1000 beet-days, at the
// dips. Its 5th percentile over weeks 2-3 is within a fifth of its median.
func TestGraceSteady(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, berlin)
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 11))
		a := newAutoBeet("Europe/Berlin")
		var graces []time.Duration
		for h := range 24 * 21 {
			late := time.Duration(r.Int64N(int64(2 * time.Minute)))
			a.event(t, start.Add(time.Duration(h)*time.Hour+17*time.Minute+late), 1)
			m, _ := LoadRateModel(a.b.Model, berlin)
			graces = append(graces, m.Grace())
		}
		if len(alarms(a.flips)) != 0 {
			logFlips(t, a.flips, berlin)
			t.Fatalf("seed %d: a job that ran every time raised alarms", seed)
		}
		steady := slices.Clone(graces[24*7:])
		slices.Sort(steady)
		med := steady[len(steady)/2]
		t.Logf("seed %d: grace over weeks 2-3: 5%% %s, median %s", seed, steady[len(steady)/20], med)
		if p5 := steady[len(steady)/20]; p5 < med*4/5 { // the 5th percentile over weeks 2-3
			t.Errorf("seed %d: the grace swings: 5th percentile %s, median %s", seed, p5, med)
		}
	}
}

// TestTwiceDailyTwelveHoursApart: a job at 05:30 and 17:30 whose runs end
// 0-10 min after their slots. Which run the first runs make the day's
// first is chance; when it was 17:30, the 05:30 run came 12 h and a few
// minutes after it half the time, past half a day, and was taken for an
// extra run: the pair was never learned, and the extras flagged the job as
// running too often within days. Nothing is raised now, and a missed
// second run is flagged.
func TestTwiceDailyTwelveHoursApart(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for seed := range uint64(6) {
		for _, first := range []int{5, 17} {
			r := rand.New(rand.NewPCG(seed, 5))
			a := newAutoBeet("Europe/Berlin")
			start := time.Date(2026, 1, 12, first, 30, 0, 0, berlin)
			missed := start.Add(20*24*time.Hour + 12*time.Hour)
			for k := range 2 * 28 {
				slot := start.Add(time.Duration(k) * 12 * time.Hour)
				if slot.Equal(missed) {
					continue
				}
				a.event(t, slot.Add(time.Duration(r.Int64N(int64(10*time.Minute)))), 1)
			}
			al := alarms(a.flips)
			if len(al) != 1 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(missed) || al[0].At.After(missed.Add(3*time.Hour)) {
				logFlips(t, a.flips, berlin)
				t.Fatalf("seed %d, first run at %02d:30: want the run of %s flagged, nothing else; got %d alarms", seed, first, missed, len(al))
			}
		}
	}
}

// TestTwiceDailySecondRunMoves: a job at 15:05 and 01:15 in New York whose
// second run moves to 02:20 for good after five weeks (a crontab edited;
// or, in the judge's streams, a 02:20 run that came at 01:17 the night the
// clocks skipped its hour and taught the pair its offset) is flagged the
// first night it is late, and not again: the late second run teaches the
// pair its new offset. Only on-time second runs did, and the pair was
// flagged every night from then on (21 alarms here).
func TestTwiceDailySecondRunMoves(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	r := rand.New(rand.NewPCG(9, 1))
	a := newAutoBeet("America/New_York")
	move := time.Date(2026, 2, 10, 0, 0, 0, 0, ny) // before the clocks change on Mar 8
	for d := range 56 {
		jitter := func() time.Duration { return time.Duration(r.Int64N(int64(8 * time.Minute))) }
		a.event(t, time.Date(2026, 1, 5+d, 15, 5, 0, 0, ny).Add(jitter()), 1)
		second := time.Date(2026, 1, 6+d, 1, 15, 0, 0, ny)
		if second.After(move) {
			second = time.Date(2026, 1, 6+d, 2, 20, 0, 0, ny)
		}
		a.event(t, second.Add(jitter()), 1)
	}
	if al := alarms(a.flips); len(al) > 1 || len(al) == 1 && al[0].At.Before(move) {
		logFlips(t, a.flips, ny)
		t.Errorf("%d alarms, want at most the first night after the move", len(al))
	}
}

// TestGraceCoversSlowRuns: an hourly job whose runs end 0-2 min after
// their slot, and 1 run in 100 up to 8 min (4 times its spread: about 9.5
// times the mean lateness measured from the learned slot), the judge's
// jobs. The grace that covers such a run seldom dips far below it from the
// second day on: its 5th percentile is at least 6 min 30 s. It was 6 min
// 17 s with a grace of 9.2 times an EWMA of weight 1/16 that started from
// the first late run alone (the first runs weighed for days), and the
// 1-in-100 run was flagged as missed about once in 2500 beet-days of
// hourly jobs.
func TestGraceCoversSlowRuns(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, berlin)
	var all []time.Duration
	for seed := range uint64(16) {
		r := rand.New(rand.NewPCG(seed, 12))
		a := newAutoBeet("Europe/Berlin")
		for h := range 24 * 21 {
			late := time.Duration(r.Int64N(int64(2 * time.Minute)))
			a.event(t, start.Add(time.Duration(h)*time.Hour+17*time.Minute+late), 1)
			if m, _ := LoadRateModel(a.b.Model, berlin); h >= 24 && m.Scheduled() {
				all = append(all, m.Grace())
			}
		}
		if len(alarms(a.flips)) != 0 {
			logFlips(t, a.flips, berlin)
			t.Fatalf("seed %d: a job that ran every time raised alarms", seed)
		}
	}
	slices.Sort(all)
	p5, med := all[len(all)/20], all[len(all)/2]
	t.Logf("grace from day 2 on: 5%% %s, median %s", p5, med)
	if p5 < 6*time.Minute+30*time.Second {
		t.Errorf("the grace dips: 5th percentile %s (want 6m30s at least), median %s", p5, med)
	}
}

// TestRunNearClockChange: a job at 01:50 New York whose runs report
// 10-20 min later, and one at 02:20 Berlin that reports 5-12 min later,
// each on a beet in its zone, with and without a second run in the
// afternoon. When New York's clocks go back, cron runs the first at the
// first 01:50 and its report comes in the repeated hour, an hour before
// 02:05 comes round again: on time by the hours that passed. When
// Berlin's go forward, 02:20 does not exist, and the run comes at 03:20;
// the next day at 02:20 again. Either way the next run is due at the
// learned wall-clock time, never an hour off, and nothing is flagged
// (detectjudge's cron-twice-daily, seed 6: clean/4 had the next day's
// run and the second runs, due an hour early, flagged as missed; clean/39
// the second run of the day after, due an hour early).
func TestRunNearClockChange(t *testing.T) {
	for _, c := range []struct {
		zone           string
		from           time.Time // the first day
		hour, min      int
		late0, lateMax time.Duration
	}{
		{"America/New_York", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), 1, 50, 10 * time.Minute, 20 * time.Minute},
		{"Europe/Berlin", time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), 2, 20, 5 * time.Minute, 12 * time.Minute},
	} {
		loc, _ := time.LoadLocation(c.zone)
		for _, second := range []bool{false, true} {
			r := rand.New(rand.NewPCG(6, 4))
			a := newAutoBeet(c.zone)
			run := func(d, hour, min int) time.Time {
				return time.Date(c.from.Year(), c.from.Month(), c.from.Day()+d, hour, min, 0, 0, loc)
			}
			for d := range 50 { // across the clock change, a month in
				a.event(t, run(d, c.hour, c.min).Add(c.late0+time.Duration(r.Int64N(int64(c.lateMax-c.late0)))), 1)
				// Not checked: the day of the change (either time is
				// right), and the day after the clocks went forward (a run
				// at 03:20 that day may be a job at 03:20: until the next
				// run comes at 02:20, it is due at 03:20).
				_, o := run(d-1, 12, 0).Zone()
				_, o0 := run(d, 12, 0).Zone()
				_, o1 := run(d+1, 12, 0).Zone()
				if m, _ := LoadRateModel(a.b.Model, loc); d >= 20 && o0 == o1 && o >= o0 {
					want := run(d+1, c.hour, c.min).Add(c.late0)
					if next := m.NextRun(); next.Before(want.Add(-10*time.Minute)) || next.After(want.Add(c.lateMax)) {
						t.Errorf("%s, second run %v: on %s the next run is due at %s, want about %s", c.zone, second,
							run(d, 12, 0).Format("Jan 2"), next.In(loc).Format("Jan 2 15:04 MST"), want.Format("15:04 MST"))
					}
				}
				if second {
					a.event(t, run(d, 13, 40).Add(c.late0+time.Duration(r.Int64N(int64(c.lateMax-c.late0)))), 1)
				}
			}
			if al := alarms(a.flips); len(al) > 0 {
				logFlips(t, a.flips, loc)
				t.Errorf("%s, second run %v: %d alarms across the clock change", c.zone, second, len(al))
			}
		}
	}
}

// TestSkippedHourRunAtTheJump: a job at 02:21 Berlin and one at 02:40 New
// York, each reporting within 40 s, on a beet in its zone. The night the
// clocks skip 02:00-03:00 its time does not exist, and cron runs it at
// the jump (03:00); the next day at its time again. That run is on time:
// a month later the grace is what it was before (minutes), and a stop
// is flagged within 10 min of the missed run's time. Taken for a run
// early by 21 min (its slot was 03:21), it widened the spread for good:
// 2 h 24 min of grace, a stop flagged after 2 h 29 min.
func TestSkippedHourRunAtTheJump(t *testing.T) {
	for _, c := range []struct {
		zone      string
		from      time.Time // the first day, five weeks before the change
		hour, min int
	}{
		{"Europe/Berlin", time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC), 2, 21},
		{"America/New_York", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), 2, 40},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Skip("no zone data:", err)
		}
		r := rand.New(rand.NewPCG(21, 3))
		a := newAutoBeet(c.zone)
		var stop time.Time
		for d := range 70 {
			at := time.Date(c.from.Year(), c.from.Month(), c.from.Day()+d, c.hour, c.min, 0, 0, loc)
			if h, _, _ := at.Clock(); h != c.hour {
				at = time.Date(at.Year(), at.Month(), at.Day(), 3, 0, 0, 0, loc) // cron: at the jump
			}
			if d == 60 {
				stop = at
				break
			}
			a.event(t, at.Add(time.Duration(r.Int64N(int64(40*time.Second)))), 1)
		}
		a.until(t, stop.Add(6*time.Hour))
		m, _ := LoadRateModel(a.b.Model, loc)
		al := alarms(a.flips)
		if len(al) != 1 || al[0].At.Sub(stop) > 10*time.Minute || m.Grace() > 10*time.Minute {
			logFlips(t, a.flips, loc)
			t.Errorf("%s: %d alarms, want 1 within 10 min of the missed run at %s (grace %s)", c.zone, len(al), stop.Format("Jan 2 15:04 MST"), m.Grace())
		}
	}
}

// TestEveryFewHoursAcrossClockChanges: a job every 2, 3, 4, 6 or 8 hours
// by the wall clock (cron's "0 */3 * * *": 00:00, 03:00, …; a run in the
// hour the clocks skip is not run, one in the hour they repeat runs once),
// or every 2 h from 08:30 to 18:30 on weekdays ("30 8-18/2 * * 1-5"), on a
// beet in its zone, from February to November: nothing is flagged across
// either clock change, and a stop after the second is flagged within a
// tenth of the period. So is a job on UTC's hours round the clock on the
// same beet. Read in real time alone, the run after each change was an
// hour early or late, and the slot it left was flagged as missed, twice a
// year; the working-hours job's first slot the morning after the clocks
// went forward was 07:30 by the real-time grid, and the Monday after they
// went back 32 periods after Friday's last run in real time, 31 on the
// wall clock (its runs were taken for extras: "runs too often").
func TestEveryFewHoursAcrossClockChanges(t *testing.T) {
	type job struct {
		every, from, to, min int // hours from..to (local), every so many, at min past
		weekdays             bool
	}
	jobs := []job{{2, 0, 23, 0, false}, {3, 0, 23, 0, false}, {4, 0, 23, 0, false}, {6, 0, 23, 0, false}, {8, 0, 23, 0, false}, {2, 8, 18, 30, true}}
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Sydney"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Skip("no zone data:", err)
		}
		for _, j := range jobs {
			for _, jobLoc := range []*time.Location{loc, time.UTC} {
				if jobLoc == time.UTC && j.weekdays {
					continue // a window on another zone's clock moves on the beet's (not followed)
				}
				r := rand.New(rand.NewPCG(uint64(j.every), 8))
				a := newAutoBeet(zone)
				stop := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
				seen := map[string]bool{}
				var missed time.Time // the first run after the stop
				for h := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC); missed.IsZero(); h = h.Add(time.Minute) {
					l := h.In(jobLoc)
					key := l.Format("2006-01-02 15")
					if l.Minute() != j.min || l.Hour() < j.from || l.Hour() > j.to || (l.Hour()-j.from)%j.every != 0 || seen[key] ||
						j.weekdays && (l.Weekday() == time.Saturday || l.Weekday() == time.Sunday) {
						continue
					}
					seen[key] = true
					if !h.Before(stop) {
						missed = h
						break
					}
					a.event(t, h.Add(time.Duration(1+r.Int64N(20))*time.Second), 1)
				}
				period := time.Duration(j.every) * time.Hour
				a.until(t, missed.Add(3*24*time.Hour))
				al := alarms(a.flips)
				if len(al) != 1 || al[0].At.After(missed.Add(period/10+time.Minute)) {
					logFlips(t, a.flips, loc)
					t.Errorf("%s, %+v on %s's clock: %d alarms, want 1 within %s of the first missed run", zone, j, jobLoc, len(al), period/10+time.Minute)
				}
			}
		}
	}
}

// TestPairNearHalfDayAfterLateRun: a job twice a day about 12 h apart
// (05:10 and 17:10 Riga, reporting up to 25 min later) whose morning run
// came 4 h 30 min late once, or never came once. That run is flagged; the
// pair holds, though its morning runs fall either side of half a day
// after the evening's: unlearned, they were taken for extra runs and
// flagged as "runs too often" (detectjudge's cron-twice-daily: seed 1,
// late run/21; seed 72, missed 1 run/8).
func TestPairNearHalfDayAfterLateRun(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	for _, late := range []time.Duration{4*time.Hour + 30*time.Minute, -1} {
		for seed := range uint64(20) {
			r := rand.New(rand.NewPCG(1, seed))
			a := newAutoBeet("Europe/Riga")
			lateDay := 23
			for d := range 45 {
				for _, h := range []int{5, 17} {
					at := time.Date(2026, 9, 12+d, h, 10, 0, 0, riga).Add(time.Duration(r.Int64N(int64(25 * time.Minute))))
					if d == lateDay && h == 5 {
						if late < 0 {
							continue
						}
						at = at.Add(late)
					}
					a.event(t, at, 1)
				}
			}
			what := "late " + late.String()
			if late < 0 {
				what = "missing"
			}
			al := alarms(a.flips)
			if len(al) != 1 || al[0].Kind != beet.FlipMissedRun {
				logFlips(t, a.flips, riga)
				t.Errorf("%s, seed %d: want the run flagged once, got %d alarms", what, seed, len(al))
			}
			if w, _ := Watch(&a.b); !regexp.MustCompile(`^runs every day at \d\d:\d\d and \d\d:\d\d `).MatchString(w.Description) {
				t.Errorf("%s, seed %d: the pair is not learned again: %s", what, seed, w.Description)
			}
		}
	}
}

// TestRandomisedDelayDailyJob: a systemd timer at 03:00 with
// RandomizedDelaySec=6h runs daily at a random time from 03:00 to 09:00
// Berlin. Stopped for three days in its first week, then run for seven
// weeks with one run missing, it is learned as a daily job (not "every 2
// days with a second ping", which flagged a missed second run every
// other day, nor the rate fallback), its missing run is flagged before
// the next day's window opens, and it raises at most one alarm besides
// (its first runs may happen to come within an hour of each other, which
// looks punctual). Its candidate used to break whenever a run came more
// than 2 h 24 min off the run it started from.
func TestRandomisedDelayDailyJob(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	const stopDay, stopDays, missDay = 3, 3, 40
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(7, seed))
		a := newAutoBeet("Europe/Berlin")
		day := func(d int) time.Time { return time.Date(2026, 9, 1+d, 3, 0, 0, 0, berlin) }
		for d := range 56 {
			if d >= stopDay && d < stopDay+stopDays || d == missDay {
				continue
			}
			delay := time.Duration(r.Int64N(int64(6 * time.Hour)))
			a.event(t, day(d).Add(delay+time.Duration(60+r.IntN(120))*time.Second), 1)
		}
		a.until(t, day(56))
		var flagged bool
		others := 0
		for _, f := range alarms(a.flips) {
			switch {
			case !f.At.Before(day(stopDay)) && f.At.Before(day(stopDay+stopDays)):
			case !f.At.Before(day(missDay)) && f.At.Before(day(missDay+1)):
				flagged = f.Kind == beet.FlipMissedRun
			default:
				others++
			}
		}
		w, _ := Watch(&a.b)
		if !flagged || others > 1 || !strings.Contains(w.Description, "every day") || strings.Contains(w.Description, "second") {
			logFlips(t, a.flips, berlin)
			t.Errorf("seed %d: missing run flagged %v, %d other alarms; %s", seed, flagged, others, w.Description)
		}
	}
}

// TestDailyJobFirstPingByHand: a daily job whose first ping was sent by
// hand at any time of the day (setting it up), then runs at its hour for
// 40 days, is learned as a daily job and raises nothing, over 200 random
// set-ups. Before a run whole days after a candidate of several days
// restarted it as daily, one (seed 191) was taken for "every 2 days with a
// second ping 18 h 12 min after each run" and flagged 16 missed second
// runs (without that restart now, seed 51 is "every 2 days").
func TestDailyJobFirstPingByHand(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(3, seed))
		a := newAutoBeet("Europe/Berlin")
		hh := r.IntN(24)
		first := time.Date(2026, 9, 1, 0, 0, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(24 * time.Hour))))
		a.event(t, first, 1)
		for d := 1; d < 40; d++ {
			if at := time.Date(2026, 9, 1+d, hh, 0, 0, 0, berlin).Add(time.Duration(r.Int64N(int64(3 * time.Minute)))); at.After(first) {
				a.event(t, at, 1)
			}
		}
		a.until(t, time.Date(2026, 10, 11, 0, 0, 0, 0, berlin))
		if w, _ := Watch(&a.b); len(alarms(a.flips)) != 0 || !strings.Contains(w.Description, "every day") {
			logFlips(t, a.flips, berlin)
			t.Fatalf("seed %d (first ping %s, runs at %02d:00): %d alarms; %s", seed, first.Format("15:04"), hh, len(alarms(a.flips)), w.Description)
		}
	}
}

// TestOnceADayAtRandomTimes: one event a day at a random time within 16
// hours (a job run whenever a laptop is up, a report someone sends once a
// day) for 60 days, in 100 streams, raises at most 8 alarms. A daily
// candidate that let its runs be a quarter of a day off took it for a
// daily job far more often, and flagged the late ones as missed (43); a
// sixth of a day raised 13 (the code before either, a tenth: 10), 11
// since a daily candidate learns its first runs' spread (noteFirstSpread),
// and 6 since a schedule whose runs came later than the half day of grace
// it can give is watched as no schedule (lateFits); 9 since three runs
// within 4 hours of the day are a delayed daily job (noteArcDaily; within
// 3 hours 8, within 5 10).
func TestOnceADayAtRandomTimes(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	total := alarmsAtRandomTimes(t, "Europe/Berlin", 5, 100, 60, 16*time.Hour, time.Date(2026, 11, 1, 0, 0, 0, 0, berlin),
		func(r *rand.Rand) time.Time { return time.Date(2026, 9, 1, r.IntN(24), 0, 0, 0, berlin) })
	if total > 9 {
		t.Errorf("%d alarms in 100 streams of 60 days, want at most 9", total)
	}
}

// alarmsAtRandomTimes is the alarms raised in all by streams of one event
// a day (dailyAtRandom) for days days from a first time drawn per stream,
// replayed until until; stream i draws from PCG(seed, i).
func alarmsAtRandomTimes(t *testing.T, zone string, seed uint64, streams, days int, spread time.Duration, until time.Time, first func(*rand.Rand) time.Time) int {
	total := 0
	for i := range uint64(streams) {
		r := rand.New(rand.NewPCG(seed, i))
		a := newAutoBeet(zone)
		a.dailyAtRandom(t, r, first(r), days, spread)
		a.until(t, until)
		total += len(alarms(a.flips))
	}
	return total
}

// dailyAtRandom feeds one event a day for days days from first, each a
// uniform 0..spread after that day's time (a job delayed at random).
func (a *autoBeet) dailyAtRandom(t *testing.T, r *rand.Rand, first time.Time, days int, spread time.Duration) {
	for d := range days {
		a.event(t, first.AddDate(0, 0, d).Add(time.Duration(r.Int64N(int64(spread)))), 1)
	}
}

// TestDelayedDailyJobUsualLateness: a daily job at 15:00 started at random
// up to 7 h later is said to be "usually 0-N late" with N no more than
// those 7 h after three weeks: three times its runs' mean lateness, the
// words of a job whose lateness has a tail, made it "usually 0-10 h 44 min
// late" (0-11 h 42 min on one seed, nearly the 12 h grace it is flagged
// after), where its runs came at most 6 h after its slot.
func TestDelayedDailyJobUsualLateness(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	usual := regexp.MustCompile(`usually 0-(\d+) h(?: (\d+) min)? late`)
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(21, seed))
		a := newAutoBeet("Europe/Riga")
		a.dailyAtRandom(t, r, time.Date(2026, 3, 2, 15, 0, 0, 0, riga), 21, 7*time.Hour)
		w, _ := Watch(&a.b)
		m := usual.FindStringSubmatch(w.Description)
		if m == nil {
			t.Fatalf("seed %d: %q says no lateness in hours", seed, w.Description)
		}
		h, _ := strconv.Atoi(m[1])
		mins, _ := strconv.Atoi(m[2])
		if late := time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute; late > 7*time.Hour {
			t.Errorf("seed %d: %q: usually %s late, for runs up to 7 h after their time", seed, w.Description, late)
		}
	}
}

// TestDelayedDailyJobKeepsItsSlot: a daily job at 06:00 Berlin started at
// random up to 8 h later (seed 140 of detectjudge's cron-daily-delay,
// missed 1 run/5). Three runs in a row in the top of that span moved its
// slot from 06:55 to 11:31, the next early run dropped the schedule, and
// the job was left to the rates ("about 1.0 events a day", a silence
// flagged after 10 days): its missed run on its 31st day went unflagged.
// It keeps its slot and the missed run is flagged that day.
func TestDelayedDailyJobKeepsItsSlot(t *testing.T) {
	s := readDump(t, "testdata/cron-daily-delay-missed-run.csv")
	a := s.feed(t, s.start)
	n := len(a.flips)
	a.until(t, s.end)
	al := alarms(a.flips[n:])
	if len(al) != 1 || al[0].Kind != beet.FlipMissedRun {
		w, _ := Watch(&a.b)
		logFlips(t, al, time.UTC)
		t.Fatalf("want the missed run flagged before %s, got %d alarms (watching: %s)", s.end, len(al), w.Description)
	}
}

// TestDelayedDailyJobFirstWeek: a daily job started at random up to 4 h
// after its time (a systemd timer's RandomizedDelaySec) raises at most 4
// alarms in its first 10 days over 200 streams (3 now; 8 before its first
// runs' spread was learned, noteFirstSpread; 19 before the two changes
// below). Its first three runs come within about an hour of each other a
// fifth of the time, which looks punctual: the job is recognised with a
// grace of 2 h 24 min. A run that then comes hours early is the slot's run
// (early by up to dailyLearnTolerance in the first week, not an extra ping
// that left the slot to be flagged), and it moves the anchor, which counts
// as lateness of the runs before and widens the grace. What is left: a
// fourth run later than the grace, right after three close ones.
func TestDelayedDailyJobFirstWeek(t *testing.T) {
	sydney, _ := time.LoadLocation("Australia/Sydney")
	total := alarmsAtRandomTimes(t, "Australia/Sydney", 11, 200, 10, 4*time.Hour, time.Date(2026, 9, 6, 0, 0, 0, 0, sydney),
		func(r *rand.Rand) time.Time { return time.Date(2026, 8, 27, r.IntN(24), r.IntN(60), 0, 0, sydney) })
	if total > 4 {
		t.Errorf("%d alarms in 200 streams of 10 days, want at most 4", total)
	}
}

// TestDailyScheduleNotFromChanceWeek: a beet of random events at about one
// a day (a quiet webhook), silent for three days in its third week, then
// twelve days with one event each between 09:00 and 15:00, then a day with
// none: those days fit a daily job delayed at random, but the gaps before
// them do not (gapsFitDays), so the missing day raises no missed run (it
// did, as the run due at 11:43).
func TestDailyScheduleNotFromChanceWeek(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := rand.New(rand.NewPCG(5, 5))
	a := newAutoBeet("Europe/Berlin")
	day := func(d int) time.Time { return time.Date(2026, 9, 1+d, 0, 0, 0, 0, berlin) }
	for d := range 21 {
		if d >= 14 && d < 17 {
			continue // three days with none
		}
		at := []time.Duration{time.Duration(r.Int64N(int64(24 * time.Hour)))}
		if r.IntN(2) == 0 {
			at = append(at, time.Duration(r.Int64N(int64(24*time.Hour))))
			slices.Sort(at)
		}
		for _, h := range at {
			a.event(t, day(d).Add(h), 1)
		}
	}
	for d := 21; d < 33; d++ {
		a.event(t, day(d).Add(9*time.Hour+time.Duration(r.Int64N(int64(6*time.Hour)))), 1)
	}
	a.event(t, day(34).Add(12*time.Hour), 1) // day 33 had none
	for _, f := range alarms(a.flips) {
		if f.Kind == beet.FlipMissedRun {
			logFlips(t, a.flips, berlin)
			t.Fatalf("a missed run flagged on a beet whose gaps were never a daily job's: %s", f.Reason)
		}
	}
}

// TestStartPingJobFlaggedInMinutes: `0 2 * * * curl … && backup.sh`, a
// daily job whose ping is sent as it starts, 0.3-3 s after 02:00 (one run
// in a hundred up to 10 s). Once it ran a week, a stop is flagged a minute
// or two after 02:00, not 2 h 24 min (a tenth of the day, the grace of runs
// that ping as they end); a month of runs raises nothing on 16 streams.
func TestStartPingJobFlaggedInMinutes(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	stopFlaggedWithin(t, 16, 29, time.Date(2026, 3, 2, 2, 0, 0, 0, berlin), 30, 1, func(r *rand.Rand) time.Duration {
		late := 300*time.Millisecond + time.Duration(r.Int64N(int64(2700*time.Millisecond)))
		if r.IntN(100) == 0 {
			late = 10 * time.Second
		}
		return late
	}, 2*time.Minute)
}

// stopFlaggedWithin replays, for each of seeds streams (PCG(seed, stream)),
// n runs of a job every so many days from start, each late as late draws,
// on a new Berlin beet, then nothing for a day: the run due after them is
// flagged as missed within the given time, and nothing else is raised.
func stopFlaggedWithin(t *testing.T, seeds, stream uint64, start time.Time, n, everyDays int, late func(*rand.Rand) time.Duration, within time.Duration) {
	t.Helper()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, stream))
		a := newAutoBeet("Europe/Berlin")
		for k := range n {
			a.event(t, start.AddDate(0, 0, k*everyDays).Add(late(r)), 1)
		}
		stop := start.AddDate(0, 0, n*everyDays)
		a.until(t, stop.Add(24*time.Hour))
		if at, others := missedRunIn(t, a, stop, stop.Add(within), berlin, seed); at.IsZero() || others > 0 {
			t.Errorf("seed %d: the stop flagged within %s of its time: %v; other alarms: %d", seed, within, !at.IsZero(), others)
		}
	}
}

// TestTightStartsNeedADay: an hourly job from 00:17 whose runs end up to
// a minute after their slot, the first ten within 10 s by chance, then one
// 100 s late (a slow run, well within the tenth of the hour its schedule
// gives): nothing is raised. Seven tight runs alone made it a job pinged
// at its start, and the slow run was flagged a minute after its time.
func TestTightStartsNeedADay(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 3, 2, 0, 17, 0, 0, berlin)
	r := rand.New(rand.NewPCG(3, 30))
	a := newAutoBeet("Europe/Berlin")
	for h := range 48 {
		late := time.Duration(r.Int64N(int64(60 * time.Second)))
		switch {
		case h < 10:
			late = time.Duration(r.Int64N(int64(10 * time.Second)))
		case h == 10:
			late = 100 * time.Second
		}
		a.event(t, start.Add(time.Duration(h)*time.Hour+late), 1)
	}
	if got := alarms(a.flips); len(got) != 0 {
		logFlips(t, a.flips, berlin)
		t.Fatalf("%d alarms on a job that ran every hour: %s", len(got), got[0].Reason)
	}
}

// TestWeeklyJobGraceOfADay: a weekly backup, Sundays at 03:00, whose runs
// end 5-45 min later. After twelve weeks it stops: the missed run is
// flagged within 4 h of 03:00, on the fit of its runs' lateness (a tenth of
// the week flagged it 17 h after), and the runs before raise nothing.
func TestWeeklyJobGraceOfADay(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	stopFlaggedWithin(t, 8, 31, time.Date(2026, 3, 1, 3, 0, 0, 0, berlin), 12, 7, func(r *rand.Rand) time.Duration { // Sundays
		return 5*time.Minute + time.Duration(r.Int64N(int64(40*time.Minute)))
	}, 4*time.Hour)
}

// TestShortJobGraceFromItsRuns: `0 2 * * * backup.sh && curl …`, a daily
// job pinged as it ends, 1-4 min after 02:00. After three weeks of runs it
// stops: the missed run is flagged within an hour of 02:00 (10 × the
// latest lateness, under a tenth of the day), not 2 h 24 min after, and
// the runs before raise nothing on 16 streams.
func TestShortJobGraceFromItsRuns(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	stopFlaggedWithin(t, 16, 32, time.Date(2026, 3, 2, 2, 0, 0, 0, berlin), 21, 1, func(r *rand.Rand) time.Duration {
		return time.Minute + time.Duration(r.Int64N(int64(3*time.Minute)))
	}, time.Hour)
}

// TestStartPingJobAcrossClockChanges: a daily job pinged as it starts,
// within 3 s of its time, for 11 months from January: at 02:30 Berlin on
// a Berlin beet (the spring night skips it), 01:30 New York on a New York
// beet (the autumn night repeats it), and New York's 06:00 and 09:00 on
// beets left at UTC and at Berlin. Nothing is raised, though its grace is
// a minute: the night New York's clocks go back, its run comes an hour
// later on the other beets' clocks, and is waited for (laterClock).
func TestStartPingJobAcrossClockChanges(t *testing.T) {
	cases := []struct {
		beet, job string
		h, m      int
	}{{"Europe/Berlin", "Europe/Berlin", 2, 30}, {"America/New_York", "America/New_York", 1, 30},
		{"UTC", "America/New_York", 6, 0}, {"Europe/Berlin", "America/New_York", 9, 0}}
	for _, c := range cases {
		loc, _ := time.LoadLocation(c.job)
		for seed := range uint64(3) {
			r := rand.New(rand.NewPCG(seed, 6))
			a := newAutoBeet(c.beet)
			for d := range 330 {
				a.event(t, time.Date(2026, 1, 5+d, c.h, c.m, 0, 0, loc).Add(time.Duration(r.Int64N(int64(3*time.Second)))), 1)
			}
			if got := alarms(a.flips); len(got) > 0 {
				t.Errorf("%s job on a %s beet, seed %d: %d alarms, the first: %s", c.job, c.beet, seed, len(got), got[0].Reason)
			}
			if m, _ := LoadRateModel(a.b.Model, loc); m.Grace() > 2*time.Minute {
				t.Errorf("%s job on a %s beet, seed %d: grace %s, want a minute or two", c.job, c.beet, seed, m.Grace())
			}
		}
	}
}

// TestShortJobGraceFromItsFirstRuns: a nightly job at 02:00 whose runs
// end 1-4 min later stops after its 7th run: the missed run is flagged
// within 80 min of its time (the lateness its runs predict), not a tenth
// of the day later.
func TestShortJobGraceFromItsFirstRuns(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	stopFlaggedWithin(t, 16, 33, time.Date(2026, 3, 2, 2, 0, 0, 0, berlin), 7, 1, func(r *rand.Rand) time.Duration {
		return time.Minute + time.Duration(r.Int64N(int64(3*time.Minute)))
	}, 80*time.Minute)
}

// TestShortJobGraceAfterThreeWeeks: the nightly job above, stopped after
// three weeks of runs within 3 min of each other, is flagged within 24 min
// of its time, 8 times their spread (at 10 times, up to 28 min: twice the
// time by which its slowest run would have come).
func TestShortJobGraceAfterThreeWeeks(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	stopFlaggedWithin(t, 16, 34, time.Date(2026, 3, 2, 2, 0, 0, 0, berlin), 21, 1, func(r *rand.Rand) time.Duration {
		return time.Minute + time.Duration(r.Int64N(int64(3*time.Minute)))
	}, 24*time.Minute)
}

// TestEarlierRunsWidenTheGrace: a daily job whose runs came at 17:47-17:48
// for nine days, then earlier (17:27 to 17:21), and from then on spread
// over that half hour. Nothing is raised: the runs before the slot count
// in its spread. Without them its largest lateness was a minute, and the
// run 19 min after the earliest was flagged as missed once the grace came
// from the runs.
func TestEarlierRunsWidenTheGrace(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	first := []int{47, 48, 47, 48, 47, 47, 48, 47, 48, 27, 22, 21, 22, 40}
	r := rand.New(rand.NewPCG(5, 34))
	a := newAutoBeet("Europe/Riga")
	for d := range 30 {
		m := 21 + r.IntN(38)
		if d < len(first) {
			m = first[d]
		}
		a.event(t, time.Date(2026, 8, 12+d, 17, m, r.IntN(60), 0, riga), 1)
	}
	if got := alarms(a.flips); len(got) > 0 {
		logFlips(t, a.flips, riga)
		t.Fatalf("%d alarms on a job that ran every day: %s", len(got), got[0].Reason)
	}
}

// TestTwiceDailyOnAnotherClock: `0 8,20 * * *` on a server's clock in
// Berlin, Los Angeles or Sydney, reporting to a UTC beet (and Los Angeles'
// to a Berlin one), for a year from January and from July, runs up to 30 s
// late. The autumn change of the job's clock between a day's run and its
// second makes the second an hour later on the beet's clock, within two
// minutes' grace: once the spring change showed the job keeps another
// clock, it is waited for an hour more (pairSlack), as when the beet's own
// clocks change, and nothing is flagged. The night the Berlin beet's
// clocks change, the pair is 13 or 11 h apart on its wall and 12 h in real
// time: the offset stays 12 h (it was learned from the wall, and the next
// night's second run was flagged). A missed run is still flagged.
func TestTwiceDailyOnAnotherClock(t *testing.T) {
	for _, c := range []struct {
		clock, beet string
		julyFirst   int // from July, alarms before the missed run: the autumn change
	}{{"Europe/Berlin", "UTC", 1}, {"America/Los_Angeles", "UTC", 1}, {"Australia/Sydney", "UTC", 0}, {"America/Los_Angeles", "Europe/Berlin", 1}} {
		clock, err := time.LoadLocation(c.clock)
		if err != nil {
			t.Skip("no zone data:", err)
		}
		for i, from := range []time.Time{time.Date(2026, 1, 7, 0, 0, 0, 0, clock), time.Date(2026, 7, 9, 0, 0, 0, 0, clock)} {
			a := newAutoBeet(c.beet)
			r := rand.New(rand.NewPCG(uint64(i), 8))
			end := from.AddDate(1, 0, 0)
			missed := from.AddDate(0, 5, 0).Add(20 * time.Hour) // a second run, five months in
			for d := from; d.Before(end); d = d.AddDate(0, 0, 1) {
				for _, h := range []int{8, 20} {
					if run := time.Date(d.Year(), d.Month(), d.Day(), h, 0, 0, 0, clock); !run.Equal(missed) {
						a.event(t, run.Add(time.Duration(r.Int64N(30e9))), 1)
					}
				}
			}
			a.until(t, end)
			// From July, a northern job's first change is the autumn one,
			// which makes it later before anything told its clock: flagged.
			first := i * c.julyFirst
			if al := alarms(a.flips); len(al) != first+1 || al[first].At.Before(missed) || al[first].At.After(missed.Add(5*time.Minute)) ||
				first == 1 && al[0].At.Month() != time.October && al[0].At.Month() != time.November {
				logFlips(t, al, time.UTC)
				t.Errorf("%s on %s from %s: %d alarms, want %d before the missed run's at %s", c.clock, c.beet, from.Format("Jan 2"), len(al), first, missed)
			}
		}
	}
}

// TestMissedRunReasonSaysTheClockHour: a daily job at 06:00 on Berlin's
// clock, on a UTC beet, runs at 04:00 UTC in summer; the night Berlin's
// clocks go back it runs at 05:00, so its run is waited for an hour more
// (laterClock). Missed that day, it is flagged an hour after its grace, and
// the reason says why, and whose clock: "no event by 05:0x" beside
// "flagged 2 min after its time" read as an hour's delay.
func TestMissedRunReasonSaysTheClockHour(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	a := newAutoBeet("UTC")
	r := rand.New(rand.NewPCG(6, 1))
	missed := time.Date(2026, 10, 25, 6, 0, 0, 0, berlin) // the night the clocks went back
	for d := time.Date(2026, 8, 1, 6, 0, 0, 0, berlin); d.Before(missed); d = d.AddDate(0, 0, 1) {
		a.event(t, d.Add(time.Duration(r.Int64N(20e9))), 1)
	}
	a.until(t, missed.Add(2*time.Hour))
	al := alarms(a.flips)
	slot := time.Date(2026, 10, 25, 4, 0, 0, 0, time.UTC) // its summer slot
	if len(al) != 1 || al[0].At.Before(slot.Add(time.Hour)) || al[0].At.After(slot.Add(time.Hour+10*time.Minute)) ||
		!strings.Contains(al[0].Reason, "an hour more in case the job keeps Europe/Berlin's clock, which went back on Oct 25") {
		logFlips(t, al, time.UTC)
		t.Fatalf("want one missed run an hour after %s, saying why", slot)
	}
}

// TestMissedRunReasonNamesTheOtherClock: a daily job at 08:59 on a beet in
// Riga whose run on April 5 is missed. Sydney's clocks went back that
// night, so a job on Sydney's clock would run an hour later now, and the
// run is waited for an hour more; the reason says it was Sydney's clock,
// since Riga's did not change (it said "as the clocks changed").
func TestMissedRunReasonNamesTheOtherClock(t *testing.T) {
	riga, err := time.LoadLocation("Europe/Riga")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	a := newAutoBeet("Europe/Riga")
	r := rand.New(rand.NewPCG(14, 1))
	missed := time.Date(2026, 4, 5, 8, 59, 0, 0, riga)
	for d := time.Date(2026, 3, 1, 8, 59, 0, 0, riga); d.Before(missed); d = d.AddDate(0, 0, 1) {
		a.event(t, d.Add(time.Duration(r.Int64N(60e9))), 1)
	}
	a.until(t, missed.Add(3*time.Hour))
	al := alarms(a.flips)
	if len(al) != 1 || al[0].At.Before(missed.Add(time.Hour)) ||
		!strings.Contains(al[0].Reason, "an hour more in case the job keeps Australia/Sydney's clock, which went back on Apr 5") {
		logFlips(t, al, riga)
		t.Fatalf("want one missed run an hour after %s's grace, naming Sydney's clock", missed)
	}
}

// TestTwiceDailyJobSaysBothRuns: a job at 06:10 and 18:10 is said as
// both runs, with the cron line that runs it, and its missed morning run
// as a run at its time. Said as a run at 18:10 "with a second ping about
// 12 h after each run", its cron line ran only the evening's, and the
// morning's was "the second run of the day".
func TestTwiceDailyJobSaysBothRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	a := newAutoBeet("UTC")
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday
	for d := range 12 {
		for _, h := range []int{6, 18} {
			if d == 10 && h == 6 {
				continue
			}
			a.event(t, start.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour+10*time.Minute+time.Duration(r.Int64N(int64(30*time.Second)))), 1)
		}
	}
	if w, _ := Watch(&a.b); !strings.HasPrefix(w.Description, "runs every day at 06:10 and 18:10 UTC, ") || w.Cron != "10 6,18 * * *" {
		t.Errorf("watched as %q (cron %q)", w.Description, w.Cron)
	}
	al := alarms(a.flips)
	if len(al) != 1 || !strings.HasPrefix(al[0].Reason, "Missed the run due at Mar 12 06:10 UTC") {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("want the missed 06:10 run flagged as such, got %d alarms", len(al))
	}
}

// TestHourlyJobOneRunVeryLate: an hourly job with one run 27 min late in
// its second week (past any grace under half the period) is flagged as
// missed for it and keeps its schedule once a run comes on time again: a
// stop a week later is flagged within a quarter of an hour, and the words
// still say a schedule. Taken as its lateness, the run left the job to
// the rates for good (a stop flagged after about 3 h, "about 24 events a
// day").
func TestHourlyJobOneRunVeryLate(t *testing.T) {
	a := newAutoBeet("UTC")
	start := time.Date(2026, 3, 2, 0, 17, 0, 0, time.UTC)
	late := start.Add(9*24*time.Hour + 5*time.Hour)
	stop := start.Add(16*24*time.Hour + 11*time.Hour)
	for at := start; at.Before(stop); at = at.Add(time.Hour) {
		run := at.Add(time.Duration(at.Unix()/3600%37) * time.Second)
		if at.Equal(late) {
			run = at.Add(27 * time.Minute)
		}
		a.event(t, run, 1)
	}
	a.until(t, stop.Add(3*time.Hour))
	fl := a.since(stop)
	if len(fl) == 0 || fl[0].Kind != beet.FlipMissedRun || fl[0].At.Sub(stop) > 7*time.Minute {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("the stop at %s: want a missed run within 7 min (its runs came within 37 s), not a quarter period", stop.Format("Jan 2 15:04"))
	}
	if lateFl := a.since(late); len(lateFl) == 0 || lateFl[0].Kind != beet.FlipMissedRun || lateFl[0].At.After(late.Add(27*time.Minute)) {
		logFlips(t, a.flips, time.UTC)
		t.Fatal("want the very late run flagged as missed before it came")
	}
}

// TestDailyJobOneRunHoursLate: a daily job whose run came once 6 h late
// (a server down overnight), under half a period, and on time since: the
// run was an incident, and a stop later is flagged within the grace the
// job's own runs ask for, a daily job's least (was 1.25 times the late
// run for good: 7 h 29 min).
func TestDailyJobOneRunHoursLate(t *testing.T) {
	a := newAutoBeet("Europe/Berlin")
	loc, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 4, 6, 2, 0, 0, 0, loc)
	late := start.AddDate(0, 0, 10)
	stop := start.AddDate(0, 0, 24)
	for at := start; at.Before(stop); at = at.AddDate(0, 0, 1) {
		run := at.Add(20*time.Second + time.Duration(at.Day()%5)*11*time.Second)
		if at.Equal(late) {
			run = at.Add(6 * time.Hour)
		}
		a.event(t, run, 1)
	}
	a.until(t, stop.Add(12*time.Hour))
	if fl := a.since(late); len(fl) == 0 || fl[0].Kind != beet.FlipMissedRun || fl[0].At.After(late.Add(6*time.Hour)) {
		logFlips(t, a.flips, loc)
		t.Fatal("want the run 6 h late flagged as missed before it came")
	}
	fl := a.since(stop)
	if len(fl) == 0 || fl[0].Kind != beet.FlipMissedRun || fl[0].At.Sub(stop) > 2*time.Hour+30*time.Minute {
		logFlips(t, a.flips, loc)
		t.Fatalf("the stop at %s: want a missed run within 2 h 30 min (a daily job's least grace; its other runs came within 65 s)", stop.Format("Jan 2 15:04"))
	}
}

// TestHourlyJobKeepsItsSlowRunsAfterOneVeryLate: after one run past any
// grace, the grace is what the job's own runs ask for, its slowest one
// (8 min late) included: a run that slow again is no missed run, and a
// stop is flagged within that grace, not a quarter period.
func TestHourlyJobKeepsItsSlowRunsAfterOneVeryLate(t *testing.T) {
	a := newAutoBeet("UTC")
	start := time.Date(2026, 3, 2, 0, 17, 0, 0, time.UTC)
	slow, late := start.Add(3*24*time.Hour+14*time.Hour), start.Add(9*24*time.Hour+5*time.Hour)
	slowAgain := start.Add(12*24*time.Hour + 20*time.Hour)
	stop := start.Add(16*24*time.Hour + 11*time.Hour)
	for at := start; at.Before(stop); at = at.Add(time.Hour) {
		run := at.Add(time.Duration(at.Unix()/3600%37) * time.Second)
		switch {
		case at.Equal(slow), at.Equal(slowAgain):
			run = at.Add(8 * time.Minute)
		case at.Equal(late):
			run = at.Add(27 * time.Minute)
		}
		a.event(t, run, 1)
	}
	a.until(t, stop.Add(3*time.Hour))
	if fl := a.since(slowAgain); len(fl) > 0 && fl[0].At.Before(stop) {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("the run 8 min late at %s was flagged: it is as slow as one before", slowAgain.Format("Jan 2 15:04"))
	}
	fl := a.since(stop)
	if len(fl) == 0 || fl[0].Kind != beet.FlipMissedRun || fl[0].At.Sub(stop) > 11*time.Minute {
		logFlips(t, a.flips, time.UTC)
		t.Fatalf("the stop at %s: want a missed run within 11 min (a quarter more than its slowest run)", stop.Format("Jan 2 15:04"))
	}
}

// TestClockHourSaysWhoseClock: the extra hour's words, for the beet's own
// change (a job on a clock that did not change runs an hour off) and for
// another zone's, and the plain words when neither is found.
func TestClockHourSaysWhoseClock(t *testing.T) {
	for _, c := range []struct {
		zone     string
		from, to time.Time
		want     string
	}{
		{"Europe/Berlin", time.Date(2026, 3, 28, 6, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 6, 0, 0, 0, time.UTC),
			", an hour more as the clocks here went forward on Mar 29"},
		{"UTC", time.Date(2026, 10, 24, 6, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC),
			", an hour more in case the job keeps Europe/Berlin's clock, which went back on Oct 25"},
		{"UTC", time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC), time.Date(2026, 6, 2, 6, 0, 0, 0, time.UTC),
			", an hour more as the clocks changed"},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Skip("no zone data:", err)
		}
		m := &RateModel{loc: loc}
		m.cluster = c.from.Unix()
		if got := m.clockHour(true, c.to); got != c.want {
			t.Errorf("%s from %s: %q, want %q", c.zone, c.from.Format("Jan 2"), got, c.want)
		}
		if got := m.clockHour(false, c.to); got != "" {
			t.Errorf("no extra hour: %q", got)
		}
	}
}

// TestDelayedDailyJobKeepsItsScheduleAfterAVeryLateRun: the judge's
// cron-daily-delay/late run/2 (fresh seed 150), a daily job delayed at
// random by up to about 4 h, whose run on its 21st day came 11 h after its
// slot (flagged as missed, then back). Its mean lateness's exponential
// tail was past half a day once that run was learned, and the schedule was
// lost for good: the rates watched it to the end, a stop flagged after
// days. The runs but that one fit a delay's span (fitGrace): the schedule
// holds, and a stop two weeks later is flagged as a missed run that day.
func TestDelayedDailyJobKeepsItsScheduleAfterAVeryLateRun(t *testing.T) {
	s := readDump(t, "testdata/cron-daily-delay-very-late-run.csv")
	stop := s.end.Add(14 * 24 * time.Hour)
	s.feed(t, stop).wantOneMissedRun(t, stop.Add(24*time.Hour))
}

// wantOneMissedRun advances the beet, stopped since its last event, to
// until, and fails unless that raised one alarm, a missed run, saying
// what watched the beet otherwise.
func (a *autoBeet) wantOneMissedRun(t *testing.T, until time.Time) {
	t.Helper()
	n := len(a.flips)
	a.until(t, until)
	if al := alarms(a.flips[n:]); len(al) != 1 || al[0].Kind != beet.FlipMissedRun {
		w, _ := Watch(&a.b)
		logFlips(t, a.flips[n:], time.UTC)
		t.Fatalf("want the stop flagged as a missed run by %s, got %d alarms (watching %s: %s)", until, len(al), w.Model, w.Description)
	}
}

// TestFiveMinuteJobKeepsItsScheduleAfterALateRun: a job every 5 min whose
// run after a missed slot came 2 min 38 s late, past half its period (the
// judge's cron-5min/late run/8, seed 151). Taken for the job moving, its
// schedule started over from that run, and with the calendar unknown
// again its rates watched it for the week after: a stop flagged after an
// hour, not a minute. Its calendar known, the late run is that slot's
// (oneLateRun), and a stop a day later is flagged within 2 minutes.
func TestFiveMinuteJobKeepsItsScheduleAfterALateRun(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	start := time.Date(2026, 10, 19, 0, 0, 0, 0, berlin)
	late := start.AddDate(0, 0, 9).Add(12*time.Hour + 49*time.Minute)
	stop := late.Add(24 * time.Hour)
	r := rand.New(rand.NewPCG(5, 8))
	a := newAutoBeet("Europe/Berlin")
	for slot := start.Add(4 * time.Minute); slot.Before(stop); slot = slot.Add(5 * time.Minute) {
		switch {
		case slot.Equal(late):
			a.event(t, slot.Add(2*time.Minute+38*time.Second), 1)
		default:
			a.event(t, slot.Add(time.Duration(r.IntN(15))*time.Second), 1)
		}
	}
	a.wantOneMissedRun(t, stop.Add(2*time.Minute))
}

// TestDailyJobRerunByHandKeepsItsSchedule: daily jobs (four zones, any
// time of day, runs spread up to 30 min) whose run failed on day 14-23
// (no ping, flagged) and was run again by hand 2-22 h later, as people
// do, then stopped 3-10 days on. Taken for the job moving, a rerun over
// half a day late started the schedule over: the next night's run read
// as a second ping 9 h 48 min after the "new" run, and the job was
// watched by its fallback, then its rates, for 12 days (22 of 60 stops
// not flagged within 6 h). Its calendar known, the rerun is the failed
// slot's late run (oneLateRun): each stop is flagged as a missed run
// within 6 h, and nothing else but the failed run is raised.
func TestDailyJobRerunByHandKeepsItsSchedule(t *testing.T) {
	zones := []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"}
	lost := 0
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 31))
		zone := zones[r.IntN(len(zones))]
		loc, _ := time.LoadLocation(zone)
		start := time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(20), r.IntN(24), r.IntN(60), 0, 0, loc)
		fail := 14 + r.IntN(10)
		rerun := 2*time.Hour + time.Duration(r.Int64N(int64(20*time.Hour)))
		stop := fail + 3 + r.IntN(8)
		spread := 5 + r.IntN(1800)
		a := newAutoBeet(zone)
		for d := range stop {
			day := start.AddDate(0, 0, d)
			at := day.Add(time.Duration(5+r.IntN(spread)) * time.Second)
			if d == fail {
				at = day.Add(rerun)
			}
			a.event(t, at, 1)
		}
		stopAt := start.AddDate(0, 0, stop)
		a.until(t, stopAt.Add(6*time.Hour))
		al := alarms(a.flips)
		if len(al) != 2 || al[1].Kind != beet.FlipMissedRun || al[1].At.Before(stopAt) {
			lost++
			t.Logf("seed %d (%s, rerun %s late on day %d, stop on day %d): %d alarms", seed, zone, rerun.Round(time.Minute), fail, stop, len(al))
			logFlips(t, a.flips, loc)
		}
	}
	if lost > 0 {
		t.Errorf("%d of 60 reruns by hand: the stop after them not flagged as a missed run within 6 h, or more raised", lost)
	}
}

// TestDailyJobMovedAfterAMissedDayFollowsItsNewTime: the judge's
// schedule-change/late run/11 (fresh seed 148), a daily job at 19:30 moved
// to 15:22, with no run the day of the move (flagged; the judge excuses
// alarms until Apr 7 18:00 UTC), then its runs at the new time, the second
// 1 h 50 min late. The first is kept as the missed slot's late run
// (oneLateRun); taken as the old slot's run 2 h 19 min early, the second
// moved the slot half way to it, and the next run at 15:22 left that slot
// missed: a false alarm. Nearer a period after the first than to its slot,
// the second follows the move (movedAfterLateRun), and nothing is raised
// after the excused days until the incident.
func TestDailyJobMovedAfterAMissedDayFollowsItsNewTime(t *testing.T) {
	s := readDump(t, "testdata/schedule-change-moved-after-missed-day.csv")
	excused := time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC)
	a := s.feed(t, s.start)
	a.until(t, s.start)
	for _, f := range alarms(a.flips) {
		if f.At.After(excused) {
			logFlips(t, a.flips, time.UTC)
			t.Fatalf("alarm at %s, between the excused days and the incident", f.At.Format(time.RFC3339))
		}
	}
}

// TestTwiceDailyJobKeepsItsScheduleAfterAMissedMorning: the judge's
// cron-twice-daily/missed 1 run/6 (seed 152), a job at 05:58 and 16:25
// Sydney time, learned as a run and a second ping 10 h 27 min after it,
// whose morning run was missed the day the clocks went forward: its
// afternoon run came as that day's, 9 h 36 min late (flagged, then back).
// From then on the schedule was unconfirmed after every afternoon run
// (the run's lateness read from its second ping, runSince), and a stop
// then was left to the rates. It is flagged as a missed run the next
// morning.
func TestTwiceDailyJobKeepsItsScheduleAfterAMissedMorning(t *testing.T) {
	s := readDump(t, "testdata/twice-daily-missed-morning-at-dst.csv")
	stop := s.end.Add(10*24*time.Hour + 2*time.Hour) // after the afternoon run
	s.feed(t, stop).wantOneMissedRun(t, stop.Add(18*time.Hour))
}
