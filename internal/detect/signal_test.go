package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// runner feeds a beet its events the way the store does: runs tracked in
// time order, then ApplyEvents with the group's span.
type runner struct {
	t     *testing.T
	b     *beet.Beet
	flips []beet.Flip
}

func (r *runner) group(evs ...beet.Event) []beet.Flip {
	r.t.Helper()
	ptrs := make([]*beet.Event, len(evs))
	sp := beet.EventSpan{OpenRun: r.b.Runs.StartedAt}
	for i := range evs {
		ptrs[i] = &evs[i]
		if e := evs[i]; e.Kind.Counts() {
			if sp.Count == 0 || e.ReceivedAt.Before(sp.First) {
				sp.First = e.ReceivedAt
			}
			if e.ReceivedAt.After(sp.Last) {
				sp.Last = e.ReceivedAt
			}
			sp.Count++
		}
	}
	sp.Signals = beet.TrackRuns(r.b, ptrs)
	flips, err := ApplyEvents(r.b, sp)
	if err != nil {
		r.t.Fatal(err)
	}
	if sp.Count > 0 && (r.b.LastEventAt == nil || sp.Last.After(*r.b.LastEventAt)) {
		r.b.LastEventAt = &sp.Last
	}
	r.flips = append(r.flips, flips...)
	return flips
}

// sweep applies b's deadlines up to t, as the sweeper does.
func (r *runner) sweep(t time.Time) []beet.Flip {
	r.t.Helper()
	flips, err := ApplyDeadlines(r.b, t)
	if err != nil {
		r.t.Fatal(err)
	}
	r.flips = append(r.flips, flips...)
	return flips
}

func ev(at time.Time, kind beet.EventKind, code ...int) beet.Event {
	e := beet.Event{ReceivedAt: at, Kind: kind}
	if len(code) > 0 {
		e.ExitCode = &code[0]
	}
	return e
}

// learnedAutoBeet is an auto beet that has learned an hourly job.
func learnedAutoBeet(t *testing.T, from time.Time) (*runner, time.Time) {
	t.Helper()
	r := &runner{t: t, b: &beet.Beet{ID: 9, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}}
	at := from
	for ; r.b.Status != beet.StatusUp; at = at.Add(time.Hour) {
		if at.Sub(from) > 30*24*time.Hour {
			t.Fatalf("an hourly job not learned in 30 days: %s", r.b.Status)
		}
		r.group(ev(at, beet.KindPing))
	}
	for end := at.Add(8 * 24 * time.Hour); at.Before(end); at = at.Add(time.Hour) {
		r.group(ev(at, beet.KindPing)) // a week more: armed by the events alone
	}
	return r, at
}

// TestFailureTurnsDownInEveryMode: a failure turns the beet down at once
// with a reason naming the exit code and the time in the beet's zone; the
// next success brings it up.
func TestFailureTurnsDownInEveryMode(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	auto, at := learnedAutoBeet(t, t0)
	period := periodBeet(beet.StatusNew)
	cron := cronBeet(beet.StatusNew, "14 * * * *", "Europe/Riga", 300)
	for _, tc := range []struct {
		name string
		r    *runner
		at   time.Time
	}{
		{"auto", auto, at},
		{"period", &runner{t: t, b: period}, at},
		{"cron", &runner{t: t, b: cron}, at},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.t = t
			r.group(ev(tc.at, beet.KindPing))
			fail := tc.at.Add(14 * time.Minute)
			flips := r.group(ev(fail.Add(-time.Minute), beet.KindStart), ev(fail, beet.KindFail, 2))
			if len(flips) != 1 || flips[0].To != beet.StatusDown || flips[0].Kind != beet.FlipFailed || !flips[0].At.Equal(fail) {
				t.Fatalf("failure gave flips %+v; want one to down", flips)
			}
			clock := fail.In(location(r.b)).Format("15:04 MST")
			if want := "The job reported failure (exit code 2) at " + clock + "."; flips[0].Reason != want {
				t.Errorf("reason %q, want %q", flips[0].Reason, want)
			}
			if r.b.Status != beet.StatusDown || r.b.DueAt != nil {
				t.Errorf("after failure: %s, due %v; want down with nothing pending", r.b.Status, r.b.DueAt)
			}
			// A second failure changes nothing; the next success recovers.
			if f := r.group(ev(fail.Add(time.Minute), beet.KindFail)); len(f) != 0 {
				t.Errorf("a failure while down flipped: %+v", f)
			}
			ok := fail.Add(6 * time.Minute)
			flips = r.group(ev(ok, beet.KindPing, 0))
			if len(flips) != 1 || flips[0].To != beet.StatusUp || flips[0].Kind != beet.FlipRecovery {
				t.Fatalf("success gave flips %+v; want a recovery to up", flips)
			}
			if !strings.HasPrefix(flips[0].Reason, "The job succeeded at "+ok.In(location(r.b)).Format("15:04 MST")+" with exit code 0 after being down for 6 min") {
				t.Errorf("recovery reason %q", flips[0].Reason)
			}
			if r.b.DueAt == nil {
				t.Error("after recovery nothing is pending: silence would go unnoticed")
			}
		})
	}
}

// TestFailureWhileLearning: an auto beet that fails before it learned its
// rhythm goes down, and back to learning (not up) on the next success.
func TestFailureWhileLearning(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := &runner{t: t, b: &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}}
	if f := r.group(ev(t0, beet.KindFail)); len(f) != 1 || f[0].From != beet.StatusNew || f[0].To != beet.StatusDown {
		t.Fatalf("a first event that fails: %+v", f)
	}
	if f := r.group(ev(t0.Add(time.Hour), beet.KindPing)); len(f) != 1 || f[0].To != beet.StatusLearning {
		t.Fatalf("success after a failure while learning: %+v; want back to learning", f)
	}
}

// TestStartsAndLogsAreNotEvents: a start or a log alone changes no state
// and teaches the model nothing; a new beet stays new.
func TestStartsAndLogsAreNotEvents(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := &runner{t: t, b: &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}}
	if f := r.group(ev(t0, beet.KindStart), ev(t0.Add(time.Second), beet.KindLog)); len(f) != 0 || r.b.Status != beet.StatusNew || r.b.Model != nil || r.b.DueAt != nil {
		t.Fatalf("a start and a log on a new beet: flips %+v, %s, model %v, due %v", f, r.b.Status, r.b.Model, r.b.DueAt)
	}
	if f := r.group(ev(t0.Add(3*time.Minute), beet.KindPing)); len(f) != 1 || f[0].To != beet.StatusLearning {
		t.Fatalf("the run's end is the first event: %+v", f)
	}
	m, err := LoadRateModel(r.b.Model, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Expected(t0, t0.Add(time.Hour)); got > 1.01 {
		t.Errorf("the model counts %.2f events in the first hour; the start and log must not count", got)
	}
}

// TestRunTimeLimit: with max_runtime_seconds, a start without an end
// within the limit turns the beet down in period and cron mode, and the
// start holds off the mode's own deadline meanwhile.
func TestRunTimeLimit(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	period := periodBeet(beet.StatusNew)
	period.Detection.PeriodSeconds = 24 * 3600
	cron := cronBeet(beet.StatusNew, "0 2 * * *", "UTC", 300)
	for _, b := range []*beet.Beet{period, cron} {
		t.Run(string(b.Detection.Mode), func(t *testing.T) {
			b.Detection.MaxRuntimeSeconds = 45 * 60
			r := &runner{t: t, b: b}
			r.group(ev(t0.Add(-24*time.Hour), beet.KindStart), ev(t0.Add(-24*time.Hour+4*time.Minute), beet.KindPing))
			normal := *b.DueAt
			r.group(ev(t0, beet.KindStart))
			if b.DueAt == nil || !b.DueAt.Equal(t0.Add(45*time.Minute)) {
				t.Fatalf("after a start the deadline is %v; want the limit's end %v (the mode's was %v)", b.DueAt, t0.Add(45*time.Minute), normal)
			}
			flips := r.sweep(t0.Add(47 * time.Minute))
			if len(flips) != 1 || flips[0].Kind != beet.FlipOverrun || flips[0].To != beet.StatusDown || !flips[0].At.Equal(t0.Add(45*time.Minute)) {
				t.Fatalf("past the limit: %+v", flips)
			}
			if want := "Started at " + t0.In(location(r.b)).Format("15:04 MST") + ", still running after 45 min; runs usually take 4 min; the limit is 45 min."; flips[0].Reason != want {
				t.Errorf("reason %q, want %q", flips[0].Reason, want)
			}
			// The run ends late: the beet recovers, and the run's length is known.
			flips = r.group(ev(t0.Add(50*time.Minute), beet.KindPing))
			if len(flips) != 1 || flips[0].To != beet.StatusUp || b.Runs.StartedAt != nil || b.Runs.RecentMS[len(b.Runs.RecentMS)-1] != 50*60*1000 {
				t.Fatalf("late end: flips %+v, runs %+v", flips, b.Runs)
			}
		})
	}
}

// TestRunTimeLearned: in auto mode the limit is learned from past runs
// (twice the longest, at least 5 min more), and the reason says how long
// runs usually take. Without enough runs there is no limit.
func TestRunTimeLearned(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r, at := learnedAutoBeet(t, t0)
	if limit, _ := RunLimit(r.b); limit != 0 {
		t.Fatalf("a beet that never ran has a run-time limit of %v", limit)
	}
	for i, d := range []time.Duration{3 * time.Minute, 5 * time.Minute, 4 * time.Minute, 3 * time.Minute} {
		start := at.Add(time.Duration(i) * time.Hour)
		r.group(ev(start, beet.KindStart))
		r.group(ev(start.Add(d), beet.KindPing))
	}
	if limit, learned := RunLimit(r.b); limit != 10*time.Minute || !learned {
		t.Fatalf("learned limit %v (%v), want 10 min", limit, learned)
	}
	start := at.Add(4 * time.Hour)
	r.group(ev(start, beet.KindStart))
	flips := r.sweep(start.Add(11 * time.Minute))
	if len(flips) != 1 || flips[0].Kind != beet.FlipOverrun {
		t.Fatalf("past the learned limit: %+v", flips)
	}
	if want := "Started at " + start.Format("15:04 MST") + ", still running after 10 min; runs usually take 3-5 min."; flips[0].Reason != want {
		t.Errorf("reason %q, want %q", flips[0].Reason, want)
	}
}

// TestOverrunBeforeTheEndArrives: when the end of an overrun arrives before
// any sweep judged the limit, the group first turns the beet down for the
// overrun, then recovers it: the overrun is on record either way.
func TestOverrunBeforeTheEndArrives(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	b := periodBeet(beet.StatusUp)
	b.Detection.MaxRuntimeSeconds = 600
	r := &runner{t: t, b: b}
	r.group(ev(t0, beet.KindStart))
	flips := r.group(ev(t0.Add(11*time.Minute), beet.KindPing))
	if len(flips) != 2 || flips[0].Kind != beet.FlipOverrun || flips[1].Kind != beet.FlipRecovery {
		t.Fatalf("flips %+v; want an overrun then a recovery", flips)
	}
}

// TestRunLimitPausedOrDown: an open run on a paused or down beet sets no
// deadline and flips nothing.
func TestRunLimitPausedOrDown(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	for _, st := range []beet.Status{beet.StatusPaused, beet.StatusDown} {
		b := periodBeet(st)
		b.Detection.MaxRuntimeSeconds = 60
		r := &runner{t: t, b: b}
		r.group(ev(t0, beet.KindStart))
		if b.DueAt != nil {
			t.Errorf("%s: a start set a deadline %v", st, b.DueAt)
		}
		if f := r.sweep(t0.Add(time.Hour)); len(f) != 0 {
			t.Errorf("%s: flips %+v", st, f)
		}
	}
}

func TestUsualRuns(t *testing.T) {
	for _, tc := range []struct {
		ms   []int64
		want string
	}{
		{nil, ""},
		{[]int64{240000}, "4 min"},
		{[]int64{180000, 300000}, "3-5 min"},
		{[]int64{30000, 90000}, "30 s-1 min"},
		{[]int64{2, 3}, "2-3 ms"},
		{[]int64{400, 2500}, "400 ms-2.5 s"},
		{[]int64{55, 1200}, "55 ms-1.2 s"},
		{[]int64{0, 3}, "up to 3 ms"},
		{[]int64{0, 0}, "under 1 ms"},
		{[]int64{7500000, 10800000}, "2 h 5 min-3 h"},
		{[]int64{7200000, 10800000}, "2-3 h"},
	} {
		if got := usualRuns(tc.ms); got != tc.want {
			t.Errorf("usualRuns(%v) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
