package detect

import (
	"testing"
	"time"
)

// TestSlowSurgeNotHeldByCallGap: a beet of 2 single events an hour whose
// rate rises fourfold for 3 hours: its usual gap between calls is about
// half an hour, and the events of that half hour, counted as expected
// ahead of the last event as for a beet that sends counts in batches, held
// its surges back (partial). Here 13 of 24 are flagged, 1 h 56 min after
// the rise on average (12 in 2 h 05 min each when the gap was counted).
func TestSlowSurgeNotHeldByCallGap(t *testing.T) {
	found, took := slowSurgesFlagged(t, 29)
	t.Logf("%d of 24 surges flagged, after %s all told", found, took)
	if found < 12 || took > time.Duration(found)*2*time.Hour {
		t.Fatalf("%d of 24 surges flagged, after %s all told: want 12, within 2 h each on average", found, took)
	}
}
