package detect

import (
	"testing"
	"time"
)

// TestSlowSurgeNotHeldByCallGap: a beet of 2 single events an hour whose
// rate rises fourfold for 3 hours: its usual gap between calls is about
// half an hour, and the events of that half hour, counted as expected
// ahead of the last event as for a beet that sends counts in batches, held
// its surges back (partial). Here 12 of 24 are flagged, in 23h29m all
// told (25h05m when the gap was counted; with the size of counts before
// sizeclip.go, 13 in 25h48m against 27h24m).
func TestSlowSurgeNotHeldByCallGap(t *testing.T) {
	found, took := slowSurgesFlagged(t, 29)
	t.Logf("%d of 24 surges flagged, after %s all told", found, took)
	if found < 12 || took > 24*time.Hour+15*time.Minute {
		t.Fatalf("%d of 24 surges flagged, after %s all told", found, took)
	}
}
