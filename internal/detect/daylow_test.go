package detect

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestLastingDropFlagged: a busy checkout (200 events an hour, Poisson:
// its days barely vary) whose traffic halves one morning for two days
// (half its customers cannot pay). The drop CUSUM tests for a fall to a fifth,
// and today's level took in the rest: at aaa5d11 such a halving was never
// flagged, or flagged and recovered again and again as the CUSUM's runs
// came and went. Now the first slow hour is flagged, within 2 hours, as
// one alarm that stays open for the two slow days and ends within 3 hours
// of the traffic's return.
func TestLastingDropFlagged(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed+1, 41))
		a := newAutoBeet("UTC")
		drop := a.negbinHours(t, r, t0, 21*24+10, 200, 1, 1e6)
		if a.b.Status != beet.StatusUp {
			t.Fatalf("beet %d: %s after three weeks: %+v", seed, a.b.Status, a.flips)
		}
		back := a.negbinHours(t, r, drop, 48, 200, 0.5, 1e6)
		end := a.negbinHours(t, r, back, 12, 200, 1, 1e6)
		a.until(t, end)
		var alarms []beet.Flip
		var recovered time.Time
		for _, f := range a.since(drop) {
			t.Logf("beet %d: %s at %s: %s", seed, f.Kind, f.At.Sub(drop), f.Reason)
			switch {
			case f.To != beet.StatusUp:
				alarms = append(alarms, f)
			case recovered.IsZero():
				recovered = f.At
			}
		}
		if len(alarms) != 1 || alarms[0].Kind != beet.FlipDrop || alarms[0].At.Sub(drop) > 2*time.Hour {
			t.Errorf("beet %d: want one drop within 2 h, got %d alarms", seed, len(alarms))
			continue
		}
		if recovered.Before(back) || recovered.Sub(back) > 3*time.Hour {
			t.Errorf("beet %d: recovered at %s after the return, want within 3 h of it", seed, recovered.Sub(back))
		}
	}
}

// TestSlowHourWords: the alarm says what was slow, against what, and how
// much this beet's days vary.
func TestSlowHourWords(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(7, 41))
	a := newAutoBeet("Europe/Berlin")
	drop := a.negbinHours(t, r, t0, 21*24+10, 200, 1, 1e6)
	a.negbinHours(t, r, drop, 6, 200, 0.4, 1e6)
	for _, f := range a.since(drop) {
		if f.To == beet.StatusAnomalous {
			for _, w := range []string{"Slow: only ", " from Jun 22 ", " CEST, where about ", "% of normal; this beet's days vary by about "} {
				if !strings.Contains(f.Reason, w) {
					t.Errorf("reason %q lacks %q", f.Reason, w)
				}
			}
			return
		}
	}
	t.Fatalf("the drop was not flagged: %+v", a.since(drop))
}
