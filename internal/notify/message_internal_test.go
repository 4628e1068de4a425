package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// A recovery's message says how long the beet was down in Beet's words,
// also when that was under a second ("after 300 ms", not "after 0s").
func TestRecoveryMessageSaysHowLong(t *testing.T) {
	down := time.Date(2026, 3, 14, 3, 14, 0, 0, time.UTC)
	b := &beet.Beet{ID: 1, Name: "Backup", Timezone: "UTC", Status: beet.StatusUp}
	incident := &beet.Flip{At: down, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipFailed}
	for gap, want := range map[time.Duration]string{
		300 * time.Millisecond:       "Recovered 2026-03-14 03:14 UTC after 300 ms (down since 2026-03-14 03:14 UTC).",
		40 * time.Second:             "Recovered 2026-03-14 03:14 UTC after 40 s (down since 2026-03-14 03:14 UTC).",
		9*time.Hour + 10*time.Minute: "Recovered 2026-03-14 12:24 UTC after 9 h 10 min (down since 2026-03-14 03:14 UTC).",
	} {
		up := &beet.Flip{At: down.Add(gap), From: beet.StatusDown, To: beet.StatusUp, Kind: beet.FlipRecovery, Reason: "An event came."}
		m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventUp, IncidentFlipID: 3}, b, up, incident, "", up.At.Add(time.Second))
		if m.When != want {
			t.Errorf("down for %v: %q, want %q", gap, m.When, want)
		}
		if !strings.Contains(m.Text(), want) {
			t.Errorf("down for %v: the text is\n%s", gap, m.Text())
		}
	}
}

// The text forms give the reason's numbers, in its words and units, and
// no bare floats after it: not "Observed 2, expected 15.071533594317165",
// and not "Observed 0, expected 1" for the learning guard's silence or
// "Observed 1, expected 1" for a recovery. The webhook keeps the numbers.
func TestSummaryHasNoBareNumbers(t *testing.T) {
	at := time.Date(2026, 12, 4, 22, 40, 0, 0, time.UTC)
	b := &beet.Beet{ID: 1, Name: "Checkout", Timezone: "UTC", Status: beet.StatusAnomalous}
	obs, exp, zero, one := 2.0, 15.071533594317165, 0.0, 1.0
	for _, c := range []struct {
		event string
		f     *beet.Flip
	}{
		{beet.EventAnomalous, &beet.Flip{At: at, From: beet.StatusUp, To: beet.StatusAnomalous, Kind: beet.FlipDrop,
			Reason: "Only 2 events since Dec 4 21:40 UTC (1 h), where about 15 were expected: the rate fell to 13% of normal.", Observed: &obs, Expected: &exp}},
		{beet.EventDown, &beet.Flip{At: at, From: beet.StatusLearning, To: beet.StatusDown, Kind: beet.FlipSilence,
			Reason: "No event since Dec 2 10:00 UTC (2 days 12 h); Beet is still learning its rhythm.", Observed: &zero, Expected: &one}},
		{beet.EventUp, &beet.Flip{At: at, From: beet.StatusDown, To: beet.StatusUp, Kind: beet.FlipRecovery,
			Reason: "Events are back after being down for 2 days.", Observed: &one, Expected: &one}},
	} {
		m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: c.event}, b, c.f, c.f, "", at.Add(time.Minute))
		for _, s := range []string{m.Text(), m.HTML()} {
			if !strings.Contains(s, c.f.Reason) || strings.Contains(s, "Observed") || strings.Contains(s, "15.07") || strings.Contains(s, "expected 1") {
				t.Errorf("%s: want the reason and no bare numbers:\n%s", c.f.Kind, s)
			}
		}
	}
}

// A beet that ran too often (anomalous at 22:40) and then went silent
// (down at 23:16) is "down since 23:16", not since 22:40; the incident's
// start is named as what it was.
func TestWhenNamesBothStates(t *testing.T) {
	t1 := time.Date(2026, 12, 4, 22, 40, 0, 0, time.UTC)
	t2 := time.Date(2026, 12, 4, 23, 16, 0, 0, time.UTC)
	b := &beet.Beet{ID: 1, Name: "Hourly sync", Timezone: "UTC", Status: beet.StatusDown}
	incident := &beet.Flip{At: t1, From: beet.StatusUp, To: beet.StatusAnomalous, Kind: beet.FlipTooOften, Reason: "Runs too often."}
	down := &beet.Flip{At: t2, From: beet.StatusAnomalous, To: beet.StatusDown, Kind: beet.FlipMissedRun, Reason: "Missed the run."}
	now := t2.Add(55 * time.Minute)
	want := "Down since 2026-12-04 23:16 UTC, 55 min ago (anomalous since 2026-12-04 22:40 UTC, 1 h 31 min ago)."
	if m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventDown}, b, down, incident, "", now); m.When != want {
		t.Errorf("down after anomalous: %q, want %q", m.When, want)
	}
	// Settled after flapping: the same words.
	if m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventSettled}, b, down, incident, "", now); m.When != want {
		t.Errorf("settled down after anomalous: %q, want %q", m.When, want)
	}
	// Down from the start: one time.
	if m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventDown}, b, down, down, "", now); m.When != "Down since 2026-12-04 23:16 UTC, 55 min ago." {
		t.Errorf("down: %q", m.When)
	}
}

// Events back on a beet the learning guard flagged: it is learning, not
// "back up".
func TestGuardRecoveryTitleSaysLearning(t *testing.T) {
	at := time.Date(2026, 12, 4, 22, 40, 0, 0, time.UTC)
	b := &beet.Beet{ID: 1, Name: "Signups", Timezone: "UTC", Status: beet.StatusLearning}
	incident := &beet.Flip{At: at.Add(-time.Hour), From: beet.StatusLearning, To: beet.StatusDown, Kind: beet.FlipSilence}
	back := &beet.Flip{At: at, From: beet.StatusDown, To: beet.StatusLearning, Kind: beet.FlipRecovery,
		Reason: "Events are back after being down for 1 h. Beet is still learning this beet's rhythm."}
	m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventUp}, b, back, incident, "", at)
	if m.Title != "Signups: events are back (still learning)" {
		t.Errorf("title %q", m.Title)
	}
	back.To = beet.StatusUp
	if m := render(&beet.Delivery{ID: 2, BeetID: 1, Event: beet.EventUp}, b, back, incident, "", at); m.Title != "Signups is back up" {
		t.Errorf("title of a recovery to up: %q", m.Title)
	}
}
