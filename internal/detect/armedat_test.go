package detect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestArmedAtNotAfterLearnedFlip: the armed_at a learned beet shows
// ("Alerting since") is never later than the learned flip, nor than the
// last event: it was rounded up by up to 10 minutes, into the future.
func TestArmedAtNotAfterLearnedFlip(t *testing.T) {
	start := time.Date(2026, 11, 30, 21, 13, 13, 0, time.UTC) // 13 s past a 10-minute step
	r := rand.New(rand.NewPCG(7, 8))
	paths := map[string][]time.Time{
		"young hourly": steps(start, time.Hour, 4),
		"daily":        steps(start, 24*time.Hour, 3),
	}
	var busy []time.Time // a busy rate beet: arms after two days
	for at := start; at.Before(start.Add(4 * 24 * time.Hour)); at = at.Add(time.Duration(20+r.IntN(200)) * time.Second) {
		busy = append(busy, at)
	}
	paths["rate"] = busy
	for name, events := range paths {
		t.Run(name, func(t *testing.T) {
			a := newAutoBeet("UTC")
			var last time.Time
			for _, last = range events {
				a.event(t, last, 1)
				if a.b.Status == beet.StatusUp {
					break
				}
			}
			f := a.flips[len(a.flips)-1]
			if f.Kind != beet.FlipLearned {
				t.Fatalf("not learned: %+v", a.flips)
			}
			m, err := LoadRateModel(a.b.Model, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			at, ok := m.ArmedAt()
			if !ok || at.After(f.At) || at.After(last) || f.At.Sub(at) >= 10*time.Minute {
				t.Fatalf("armed at %v (%v), learned flip at %v, last event %v: want within 10 min before the flip", at, ok, f.At, last)
			}
		})
	}
}

// steps is n times, every apart, from from.
func steps(from time.Time, every time.Duration, n int) []time.Time {
	var out []time.Time
	for i := range n {
		out = append(out, from.Add(time.Duration(i)*every))
	}
	return out
}
