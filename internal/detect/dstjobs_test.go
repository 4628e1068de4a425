package detect

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// cronRuns returns when Vixie cron, on a machine whose clock is in loc,
// starts a job at min past hour (hour −1: every hour, "min * * * *")
// between from and to. A job at a fixed hour whose time the clocks skip
// runs at the jump; one whose time comes round twice runs at the first.
// A job every hour runs whenever the clock shows its minute: once fewer
// the night the clocks go forward, once more the night they go back.
func cronRuns(loc *time.Location, from, to time.Time, hour, min int) []time.Time {
	var out []time.Time
	ran := map[string]bool{} // fixed-hour jobs: the local days run
	prev := from.Add(-time.Minute).In(loc)
	for at := from.Truncate(time.Minute); at.Before(to); at = at.Add(time.Minute) {
		l := at.In(loc)
		day := l.Format("2006-01-02")
		switch {
		case hour < 0:
			if l.Minute() == min {
				out = append(out, at)
			}
		case ran[day]:
		case l.Hour() == hour && l.Minute() == min:
			ran[day] = true
			out = append(out, at)
		default:
			// The clocks jumped forward over the job's time: cron runs
			// it at the jump.
			pw := time.Date(prev.Year(), prev.Month(), prev.Day(), prev.Hour(), prev.Minute(), 0, 0, time.UTC)
			lw := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
			job := time.Date(l.Year(), l.Month(), l.Day(), hour, min, 0, 0, time.UTC)
			if lw.Sub(pw) > time.Minute && job.After(pw) && job.Before(lw) {
				ran[day] = true
				out = append(out, at)
			}
		}
		prev = l
	}
	return out
}

// dstJob is a job as the tests below run it across a clock change.
type dstJob struct {
	name      string
	zone      string         // the beet's
	cron      *time.Location // the machine's clock
	hour, min int            // hour −1: every hour
	spring    time.Time      // the night the beet's clocks go forward (a day in it)
	fall      time.Time      // and back
	// The night the clocks go forward (spring) or back (fall) leaves the
	// next day's run an hour off on one of two clocks, the beet's or
	// UTC's, that its runs so far cannot tell apart: a stop that day is
	// waited for an hour more than usual.
	springHour, fallHour bool
}

// dstRun replays job's runs, each pinging once as it ends (20 s to 4 min
// after it starts), from five weeks before the change to three weeks
// after it, stopping at stop if not zero. It returns the alarms.
func dstRun(t *testing.T, j dstJob, change, stop time.Time, seed uint64) ([]beet.Flip, []beet.Flip) {
	r := rand.New(rand.NewPCG(seed, 17))
	a := newAutoBeet(j.zone)
	end := change.AddDate(0, 0, 21)
	for _, at := range cronRuns(j.cron, change.AddDate(0, 0, -35), end, j.hour, j.min) {
		if !stop.IsZero() && !at.Before(stop) {
			break
		}
		a.event(t, at.Add(20*time.Second+time.Duration(r.Int64N(int64(220*time.Second)))), 1)
	}
	a.until(t, end)
	return alarms(a.flips), a.flips
}

// firstRunOn returns the first run of j on loc's day d (its machine's
// clock's runs, read in the beet's zone).
func firstRunOn(j dstJob, loc *time.Location, d time.Time) time.Time {
	from := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	runs := cronRuns(j.cron, from, from.AddDate(0, 0, 2), j.hour, j.min)
	return runs[0]
}

// berlinAndNewYork loads the two zones the clock-change tests run in, or
// skips the test where the system has no zone data.
func berlinAndNewYork(t *testing.T) (berlin, ny *time.Location) {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	ny, err = time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	return berlin, ny
}

// TestCronJobsAcrossClockChanges: jobs as people run them, learned for
// five weeks on a beet in Europe/Berlin or America/New_York, crossing the
// night the clocks go forward and the night they go back: (a) daily at
// 02:30 by cron on a machine in the beet's zone (the night the clocks skip
// it, run at 03:00; the night it comes twice, once), (b) daily at 01:30
// (twice the night New York's clocks go back: run once), (c) every hour at
// :15 (a run fewer, then one more), (d) daily by cron or a systemd timer on
// a UTC machine while the beet is in Berlin (an hour later or earlier on
// the beet's clock from the change on; 22:30 UTC crosses Berlin's
// midnight). None raises an alarm while the job runs, and a job that stops
// the day after the change is flagged within about the usual time (as a
// stop ten days before the change is, plus a few minutes), an hour more
// where its runs cannot tell the beet's clock from UTC's (springHour,
// fallHour). Cron's run at the jump can: it was anchored at 03:30 all
// the same, and a stop the next day flagged after 1 h 25 min, not 25 min.
// The hourly job keeps its grid in real time: a run fewer or more on the
// wall clock is none in real time.
func TestCronJobsAcrossClockChanges(t *testing.T) {
	berlin, ny := berlinAndNewYork(t)
	bSpring, bFall := time.Date(2026, 3, 29, 12, 0, 0, 0, berlin), time.Date(2026, 10, 25, 12, 0, 0, 0, berlin)
	nSpring, nFall := time.Date(2026, 3, 8, 12, 0, 0, 0, ny), time.Date(2026, 11, 1, 12, 0, 0, 0, ny)
	jobs := []dstJob{
		{"(a) 02:30 Berlin", "Europe/Berlin", berlin, 2, 30, bSpring, bFall, false, false},
		{"(a) 02:30 New York", "America/New_York", ny, 2, 30, nSpring, nFall, false, false},
		{"(b) 01:30 Berlin", "Europe/Berlin", berlin, 1, 30, bSpring, bFall, true, false},
		{"(b) 01:30 New York", "America/New_York", ny, 1, 30, nSpring, nFall, true, false},
		{"(c) hourly :15 Berlin", "Europe/Berlin", berlin, -1, 15, bSpring, bFall, false, false},
		{"(c) hourly :15 New York", "America/New_York", ny, -1, 15, nSpring, nFall, false, false},
		{"(d) 01:30 UTC, Berlin beet", "Europe/Berlin", time.UTC, 1, 30, bSpring, bFall, false, true},
		{"(d) 06:00 UTC, Berlin beet", "Europe/Berlin", time.UTC, 6, 0, bSpring, bFall, false, false},
		{"(d) 22:30 UTC, Berlin beet", "Europe/Berlin", time.UTC, 22, 30, bSpring, bFall, false, false},
	}
	for _, j := range jobs {
		loc, _ := time.LoadLocation(j.zone)
		for _, c := range []struct {
			name   string
			change time.Time
			hour   bool
		}{{"spring", j.spring, j.springHour}, {"fall", j.fall, j.fallHour}} {
			t.Run(fmt.Sprintf("%s/%s", j.name, c.name), func(t *testing.T) {
				for seed := range uint64(3) {
					if al, flips := dstRun(t, j, c.change, time.Time{}, seed); len(al) > 0 {
						logFlips(t, flips, loc)
						t.Errorf("seed %d: %d false alarms while the job ran", seed, len(al))
					}
					// The usual time to flag a stop (ten days before the
					// change), and a stop the day after the change.
					var took [2]time.Duration
					for i, day := range []time.Time{c.change.AddDate(0, 0, -10), c.change.AddDate(0, 0, 1)} {
						stop := firstRunOn(j, loc, day)
						al, flips := dstRun(t, j, c.change, stop, seed)
						if len(al) == 0 || al[0].At.Before(stop) {
							logFlips(t, flips, loc)
							t.Errorf("seed %d: stop at %s: not flagged after it", seed, stop.In(loc).Format("Jan 2 15:04 MST"))
							took[i] = -1
							continue
						}
						took[i] = al[0].At.Sub(stop)
					}
					t.Logf("seed %d: a stop is flagged after %s, the day after the change after %s", seed, took[0], took[1])
					want := took[0] + took[0]/2 + 5*time.Minute
					if c.hour {
						want += time.Hour
					}
					if took[0] >= 0 && took[1] > want {
						t.Errorf("seed %d: the stop the day after the change is flagged after %s, usually after %s (want %s at most)", seed, took[1], took[0], want)
					}
				}
			})
		}
	}
}

// TestMissedRunOnTheClockChangeNamesItsTime: a daily job at 11:27 that
// stops the day the beet's clocks go forward is waited for an hour more
// (a job on a clock that did not change runs at 12:27 now), and the
// reason names the run at its time, 11:27, and says why the hour: named
// at 12:27 CEST beside "runs every day at 11:27", it read as the
// detector's error. A job whose time the clocks skip (02:30 in New York,
// run by cron at the jump) is named as before, at the jump's hour.
func TestMissedRunOnTheClockChangeNamesItsTime(t *testing.T) {
	berlin, ny := berlinAndNewYork(t)
	bSpring, nSpring := time.Date(2026, 3, 29, 12, 0, 0, 0, berlin), time.Date(2026, 3, 8, 12, 0, 0, 0, ny)
	for _, c := range []struct {
		job        dstJob
		due, extra string
	}{
		{dstJob{name: "11:27 Berlin", zone: "Europe/Berlin", cron: berlin, hour: 11, min: 27, spring: bSpring},
			"due at Mar 29 11:2", ", an hour more as the clocks here went forward on Mar 29"},
		{dstJob{name: "11:27 New York", zone: "America/New_York", cron: ny, hour: 11, min: 27, spring: nSpring},
			"due at Mar 8 11:2", ", an hour more as the clocks here went forward on Mar 8"},
		{dstJob{name: "02:30 New York", zone: "America/New_York", cron: ny, hour: 2, min: 30, spring: nSpring},
			"due at Mar 8 03:3", ""},
	} {
		t.Run(c.job.name, func(t *testing.T) {
			loc, _ := time.LoadLocation(c.job.zone)
			stop := firstRunOn(c.job, loc, c.job.spring)
			al, flips := dstRun(t, c.job, c.job.spring, stop, 1)
			if len(al) == 0 || al[0].Kind != beet.FlipMissedRun || al[0].At.Before(stop) {
				logFlips(t, flips, loc)
				t.Fatalf("the stop at %s: want a missed run after it", stop.In(loc).Format("Jan 2 15:04 MST"))
			}
			r := al[0].Reason
			if !strings.Contains(r, c.due) || c.extra != "" && !strings.Contains(r, c.extra) || c.extra == "" && strings.Contains(r, "an hour more") {
				t.Errorf("reason %q: want %q and %q", r, c.due, c.extra)
			}
		})
	}
}
