package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

func periodBeet(status beet.Status) *beet.Beet {
	return &beet.Beet{ID: 7, Status: status, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}}
}

func cronBeet(status beet.Status, expr, tz string, grace int64) *beet.Beet {
	return &beet.Beet{ID: 8, Status: status, Timezone: tz,
		Detection: beet.Detection{Mode: beet.ModeCron, Cron: expr, Timezone: tz, GraceSeconds: grace}}
}

func TestPeriodEvents(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	d, err := OnEvents(periodBeet(beet.StatusNew), t0, 1, nil)
	if err != nil || d.Flip == nil || d.Flip.To != beet.StatusUp || d.Flip.Kind != beet.FlipFirst || d.Due == nil || !d.Due.Equal(t0.Add(70*time.Minute)) {
		t.Fatalf("first event: %+v %v", d, err)
	}
	if !strings.Contains(d.Flip.Reason, "at least every 1 h, plus 10 min grace") {
		t.Errorf("reason %q", d.Flip.Reason)
	}
	if d, _ := OnEvents(periodBeet(beet.StatusUp), t0, 1, nil); d.Flip != nil || !d.Due.Equal(t0.Add(70*time.Minute)) {
		t.Fatalf("event on an up beet: %+v", d)
	}
	wentDown := t0.Add(-3 * time.Hour)
	if d, _ := OnEvents(periodBeet(beet.StatusDown), t0, 1, &wentDown); d.Flip == nil || d.Flip.To != beet.StatusUp || d.Flip.Kind != beet.FlipRecovery || !strings.Contains(d.Flip.Reason, "after being down for 3 h") {
		t.Fatalf("recovery: %+v", d.Flip)
	}
	// A recovery within a second of the flip says how long, not "0s".
	wentDown = t0.Add(-300 * time.Millisecond)
	if d, _ := OnEvents(periodBeet(beet.StatusDown), t0, 1, &wentDown); d.Flip == nil || !strings.HasSuffix(d.Flip.Reason, "after being down for 300 ms.") {
		t.Errorf("recovery 300 ms after the flip: %+v", d.Flip)
	}
	if d, _ := OnEvents(periodBeet(beet.StatusPaused), t0, 1, nil); d.Flip != nil || d.Due != nil {
		t.Fatalf("paused beet: %+v", d)
	}
	auto := &beet.Beet{Status: beet.StatusNew, Detection: beet.Detection{Mode: beet.ModeAuto}}
	if d, _ := OnEvents(auto, t0, 1, nil); d.Flip == nil || d.Flip.To != beet.StatusLearning || d.Due != nil {
		t.Fatalf("auto first event: %+v", d)
	}
}

func TestPeriodDeadline(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	b := periodBeet(beet.StatusUp)
	due := t0.Add(70 * time.Minute)
	b.LastEventAt, b.DueAt = &t0, &due
	d, err := OnDeadline(b)
	if err != nil || d.Flip == nil || d.Flip.To != beet.StatusDown || d.Flip.Kind != beet.FlipSilence || !d.Flip.At.Equal(due) || d.Due != nil {
		t.Fatalf("deadline: %+v %v", d, err)
	}
	if want := "No event since Jun 1 10:00 UTC (1 h 10 min); expected one at least every 1 h, plus 10 min grace."; d.Flip.Reason != want {
		t.Errorf("reason %q, want %q", d.Flip.Reason, want)
	}
	for _, st := range []beet.Status{beet.StatusDown, beet.StatusPaused, beet.StatusNew, beet.StatusLearning} {
		b.Status = st
		if d, _ := OnDeadline(b); d.Flip != nil || d.Due != nil {
			t.Errorf("deadline on a %s beet: %+v", st, d)
		}
	}
	// Without grace the reason does not speak of one ("plus 0s grace").
	b = periodBeet(beet.StatusUp)
	b.Detection.GraceSeconds = 0
	due = t0.Add(time.Hour)
	b.LastEventAt, b.DueAt = &t0, &due
	d, err = OnDeadline(b)
	if want := "No event since Jun 1 10:00 UTC (1 h); expected one at least every 1 h."; err != nil || d.Flip == nil || d.Flip.Reason != want {
		t.Errorf("no grace: %+v %v, want the reason %q", d.Flip, err, want)
	}
}

// TestCronAcrossDST: a daily 02:30 job in Riga around the spring-forward
// night (03:00 → 04:00 on 2021-03-28): the deadline is the next slot plus
// grace, a run a little early counts for its slot, and a missed run is
// named in the reason.
func TestCronDeadlines(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	b := cronBeet(beet.StatusUp, "30 2 * * *", "Europe/Riga", 300)
	run := time.Date(2021, 3, 26, 2, 30, 10, 0, riga)
	d, err := OnEvents(b, run, 1, nil)
	want := time.Date(2021, 3, 27, 2, 35, 0, 0, riga)
	if err != nil || d.Due == nil || !d.Due.Equal(want) {
		t.Fatalf("due %v (%v), want %v", d.Due, err, want)
	}
	early := time.Date(2021, 3, 27, 2, 28, 0, 0, riga) // 2 min early: the 03-27 run
	if d, _ := OnEvents(b, early, 1, nil); !d.Due.Equal(time.Date(2021, 3, 28, 2, 35, 0, 0, riga)) {
		t.Fatalf("early run: due %v", d.Due)
	}
	b.DueAt, b.LastEventAt = &want, &run
	d, err = OnDeadline(b)
	if err != nil || d.Flip == nil || d.Flip.Kind != beet.FlipMissedRun || !strings.Contains(d.Flip.Reason, "Mar 27 02:30 EET") {
		t.Fatalf("missed run: %+v %v", d.Flip, err)
	}
}

// TestDuration: every length of time a person reads is written one way,
// with a space before the unit, and never as "0s" or "0 min".
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "under 1 ms"},
		{0, "under 1 ms"},
		{999 * time.Microsecond, "under 1 ms"},
		{time.Millisecond, "1 ms"},
		{300 * time.Millisecond, "300 ms"},
		{999 * time.Millisecond, "999 ms"},
		{time.Second, "1 s"},
		{1250 * time.Millisecond, "1.2 s"},
		{2 * time.Second, "2 s"},
		{9999 * time.Millisecond, "9.9 s"},
		{10 * time.Second, "10 s"},
		{30 * time.Second, "30 s"},
		{59900 * time.Millisecond, "59 s"},
		{time.Minute, "1 min"},
		{5 * time.Minute, "5 min"},
		{59*time.Minute + 59*time.Second, "59 min"},
		{time.Hour, "1 h"},
		{time.Hour + 5*time.Minute, "1 h 5 min"},
		{9*time.Hour + 10*time.Minute, "9 h 10 min"},
		{48*time.Hour - time.Second, "47 h 59 min"},
		{48 * time.Hour, "2 days"},
		{64*time.Hour + 59*time.Minute, "2 days 16 h"},
		{72 * time.Hour, "3 days"},
		{108 * time.Hour, "4 days 12 h"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestExact: a period or grace someone set is written to the second where
// Duration would drop some of it, so its parts add up to the sum said.
func TestExact(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30 s"},
		{time.Minute, "1 min"},
		{90 * time.Second, "1 min 30 s"},
		{3 * time.Minute, "3 min"},
		{time.Hour + 30*time.Second, "1 h 30 s"},
		{25*time.Hour + 90*time.Second, "25 h 1 min 30 s"},
		{72 * time.Hour, "3 days"},
		{72*time.Hour + 5*time.Minute, "3 days 5 min"},
	} {
		if got := Exact(c.d); got != c.want {
			t.Errorf("Exact(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	b := &beet.Beet{Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 90, GraceSeconds: 90}}
	if got, want := Expectation(b), "Expects an event at least every 1 min 30 s, plus 1 min 30 s grace; silence is flagged 3 min after the last event."; got != want {
		t.Errorf("Expectation = %q, want %q", got, want)
	}
}

func TestExpectation(t *testing.T) {
	for b, want := range map[*beet.Beet]string{
		periodBeet(beet.StatusUp):                                                "Expects an event at least every 1 h, plus 10 min grace; silence is flagged 1 h 10 min after the last event.",
		cronBeet(beet.StatusUp, "30 2 * * *", "Europe/Riga", 300):                "Expects a run every day at 02:30 Europe/Riga; a missed run is flagged 5 min after its time.",
		{Status: beet.StatusNew, Detection: beet.Detection{Mode: beet.ModeAuto}}: "Waiting for the first event. Then Beet learns its rhythm; meanwhile a job is watched from its 3rd run (its 4th if it runs more often than daily), and from the 3rd event a silence far longer than any gap seen is flagged.",
	} {
		if got := Expectation(b); got != want {
			t.Errorf("Expectation = %q, want %q", got, want)
		}
	}
}

// A learning beet is watched from its first runs and, from its 3rd event,
// for a long silence (the learning guard): its first flip's reason (the
// status line the list and page show until it is learned) and its
// expectation say so, never that it learns "before alerting".
func TestLearningWordsSayWhatIsWatched(t *testing.T) {
	a := newAutoBeet("UTC")
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, gap := range []time.Duration{0, 3 * time.Hour, 7 * time.Hour} {
		at = at.Add(gap)
		a.event(t, at, 1)
		if i == 0 && (len(a.flips) != 1 || a.flips[0].To != beet.StatusLearning) {
			t.Fatalf("first event: %+v", a.flips)
		}
		for what, s := range map[string]string{"reason": a.flips[0].Reason, "expectation": Expectation(&a.b)} {
			if strings.Contains(s, "before alerting") || !strings.Contains(s, "a silence") {
				t.Errorf("after %d events, %s %q: want what is watched meanwhile (a silence), not \"before alerting\"", i+1, what, s)
			}
		}
	}
	if w, ok := Watch(&a.b); !ok || w.AlertAfter <= 0 {
		t.Errorf("the guard watches from the 3rd event: %+v", w)
	}
}

// A learning beet's watch says when full alerts start as dates and counts
// (L3 of issue 28's audit), not "14 days of events to go at the most".
func TestLearningDescriptionNamesFullAlerts(t *testing.T) {
	a := newAutoBeet("UTC")
	first := time.Date(2026, 12, 4, 0, 13, 0, 0, time.UTC)
	for _, o := range []time.Duration{0, 3 * time.Hour, 7 * time.Hour, 8 * time.Hour, 15 * time.Hour, 16 * time.Hour} {
		a.event(t, first.Add(o), 1)
	}
	w, ok := Watch(&a.b)
	want := "full alerts from Dec 11 00:13 UTC once 30 events came (6 so far), or sooner once its runs make a schedule, and by Dec 18 00:13 UTC at the latest (given 5 events)."
	if !ok || w.Model != "learning" || !strings.Contains(w.Description, want) {
		t.Errorf("watching %+v, want %q", w, want)
	}
}
