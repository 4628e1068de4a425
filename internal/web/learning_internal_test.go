package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// learningBeet applies events at first+offsets to a new auto beet, then
// its deadlines up to now, as ingestion and the sweeper do.
func learningBeet(t *testing.T, first, now time.Time, offsets ...time.Duration) *beet.Beet {
	t.Helper()
	b := &beet.Beet{ID: 1, Name: "Sparse", Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	for _, o := range offsets {
		at := first.Add(o)
		if _, err := detect.ApplyEvents(b, beet.EventSpan{First: at, Last: at, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := detect.ApplyDeadlines(b, now); err != nil {
		t.Fatal(err)
	}
	return b
}

var wordsDate = regexp.MustCompile(`[A-Z][a-z]{2} \d{1,2} \d{2}:\d{2} UTC`)

// A learning beet's page says when its full alerts start once, in the
// same words at the top and under Reliable alerts, from what the model
// watches: no date that has passed, no "the rhythm is learned" while the
// learning guard's alarm is open, and the guard's wait as the card says it.
func TestLearningPageOneAlertStart(t *testing.T) {
	first := time.Date(2026, 11, 19, 0, 13, 0, 0, time.UTC)
	h := time.Hour

	// 4 events in 15 days: past the week, short of the 5 events.
	now := first.Add(15 * 24 * h)
	b := learningBeet(t, first, now, 0, 53*h, 155*h, 242*h)
	if b.Status != beet.StatusLearning {
		t.Fatalf("sparse beet: %s (%s)", b.Status, b.StatusReason)
	}
	rel, day := reliable(b, now, time.UTC), dayOne(b, 0, now, time.UTC)
	for _, s := range []string{rel, day} {
		for _, d := range wordsDate.FindAllString(s, -1) {
			if at, _ := time.Parse("Jan 2 15:04 MST 2006", d+" 2026"); at.Before(now) {
				t.Errorf("a date that has passed, %s: %q", d, s)
			}
		}
		if strings.Contains(s, " ago") || !strings.Contains(s, "by its 5th event at the latest (4 so far)") {
			t.Errorf("want full alerts by the 5th event (4 so far), nothing ago: %q", s)
		}
	}

	// 5 events about an hour apart, then silence: the learning guard
	// flags it.
	hourly := []time.Duration{0, h, 2 * h, 3 * h, 4*h + 10*time.Minute}
	now = first.Add(5 * 24 * h)
	b = learningBeet(t, first, now, hourly...)
	if b.Status != beet.StatusDown {
		t.Fatalf("guarded beet: %s (%s)", b.Status, b.StatusReason)
	}
	if rel := reliable(b, now, time.UTC); strings.Contains(rel, "rhythm is learned") || !strings.Contains(rel, "Still learning") {
		t.Errorf("a learning beet the guard flagged: %q", rel)
	}

	// The same beet before the guard's alarm: its wait as the card says it.
	now = first.Add(5 * h)
	b = learningBeet(t, first, now, hourly...)
	w := watchViewOf(b)
	if w == nil || w.AlertAfter == "" {
		t.Fatalf("no guard on the card: %+v", w)
	}
	if rel := reliable(b, now, time.UTC); !strings.Contains(rel, "a silence over "+w.AlertAfter+" after the last event") || strings.Contains(rel, "times the longest") {
		t.Errorf("reliable alerts %q; the card says a silence of %s", rel, w.AlertAfter)
	}
}
