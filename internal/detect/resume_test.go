package detect

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestResumeLearningAutoBeet: an auto beet resumed before its model armed
// is learning, still watched by the learning guard, the guard's silence
// counted from the resume (not judged at once for the paused days); and
// an armed one resumed by its next event (resume_on_event) is up at once,
// with no second "learned" flip.
func TestResumeLearningAutoBeet(t *testing.T) {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a := newAutoBeet("UTC")
	var last time.Time
	for _, last = range []time.Time{start, start.Add(37 * time.Minute), start.Add(2*time.Hour + 5*time.Minute)} {
		a.event(t, last, 1)
	}
	b := a.b
	b.LastEventAt = &last
	m, err := LoadRateModel(b.Model, time.UTC)
	if err != nil || m.Armed() {
		t.Fatalf("want a learning model, guarded: %v, armed %v", err, m.Armed())
	}
	guardDue, _, ok := m.Deadline(false)
	if !ok {
		t.Fatal("the learning guard has no deadline")
	}
	b.Status = beet.StatusPaused
	resumed := guardDue.Add(72 * time.Hour)
	if _, err := Resume(&b, resumed, "a user"); err != nil {
		t.Fatal(err)
	}
	if b.Status != beet.StatusLearning || b.DueAt == nil || !b.DueAt.After(resumed) || b.StatusReason != "Resumed by a user; still learning the beet's rhythm." {
		t.Fatalf("resumed: %s %q due %v; want learning, the guard's deadline after the resume %v", b.Status, b.StatusReason, b.DueAt, resumed)
	}

	h := newAutoBeet("UTC")
	for _, last = range steps(start, time.Hour, 4) {
		h.event(t, last, 1)
	}
	if h.b.Status != beet.StatusUp {
		t.Fatalf("hourly job not learned: %+v", h.flips)
	}
	h.b.LastEventAt = &last
	h.b.Status, h.b.ResumeOnEvent = beet.StatusPaused, true
	next := last.Add(24 * time.Hour)
	flips, err := ApplyEvents(&h.b, beet.EventSpan{First: next, Last: next, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(flips) != 1 || flips[0].To != beet.StatusUp || h.b.Status != beet.StatusUp || h.b.DueAt == nil {
		t.Fatalf("resumed by an event: flips %+v, status %s, due %v; want one flip, to up", flips, h.b.Status, h.b.DueAt)
	}
}
