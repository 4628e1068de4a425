package detect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestYoungBeetLongSurgeFound: a beet of 10 events an hour, negative
// binomial of size 5 (hours vary by ±45%), that goes to three times its
// level for ten hours on its fifth day (NAB's PFE tweets, whose rises fall
// on days 4-8). The surge's hours taught the size fast in a beet's first
// week, so the CUSUM hovered below its alarm: none of twelve was flagged
// (two with SizeCap 15 alone, three with the settled pace alone); nor is any
// flagged before the rise.
func TestYoungBeetLongSurgeFound(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	found := 0
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed+1, 11))
		a := newAutoBeet("UTC")
		rise := a.negbinHours(t, r, t0, 4*24+12, 10, 1, 5)
		if a.b.Status != beet.StatusUp {
			t.Fatalf("beet %d: %s before the rise: %+v", seed, a.b.Status, a.flips)
		}
		a.negbinHours(t, r, rise, 10, 10, 3, 5)
		for _, f := range a.since(rise) {
			if f.Kind == beet.FlipSurge {
				t.Logf("beet %d: %s", seed, f.Reason)
				found++
				break
			}
		}
	}
	if found < 5 {
		t.Fatalf("%d of 12 ten-hour surges on day 5 flagged", found)
	}
}
