package detect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestSlowSurgeNotHeldByCallGap: a beet of 2 single events an hour whose
// rate rises fourfold for 3 hours: its usual gap between calls is about
// half an hour, and the events of that half hour, counted as expected
// ahead of the last event as for a beet that sends counts in batches, held
// its surges back (partial). Here 12 of 24 are flagged, in 23h29m all
// told (25h05m when the gap was counted; with the size of counts before
// sizeclip.go, 13 in 25h48m against 27h24m).
func TestSlowSurgeNotHeldByCallGap(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	found := 0
	var took time.Duration
	for seed := range uint64(24) {
		r := rand.New(rand.NewPCG(seed+1, 29))
		a := newAutoBeet("UTC")
		h := t0
		for ; h.Before(t0.Add(21 * 24 * time.Hour)); h = h.Add(time.Hour) {
			a.hourOfEvents(t, r, h, poissonCount(r, 2))
		}
		surge := h
		for ; h.Before(surge.Add(3 * time.Hour)); h = h.Add(time.Hour) {
			a.hourOfEvents(t, r, h, poissonCount(r, 8))
		}
		a.until(t, h)
		for _, f := range a.since(surge) {
			if f.Kind == beet.FlipSurge {
				found++
				took += f.At.Sub(surge)
				break
			}
		}
	}
	t.Logf("%d of 24 surges flagged, after %s all told", found, took)
	if found < 12 || took > 24*time.Hour+15*time.Minute {
		t.Fatalf("%d of 24 surges flagged, after %s all told", found, took)
	}
}
