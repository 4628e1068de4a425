package notify

import (
	"strings"
	"testing"
	"time"
)

// Messages name a zone once: "UTC", never "UTC (UTC)"; other zones keep
// their IANA name beside the abbreviation.
func TestInZoneSaysUTCOnce(t *testing.T) {
	at := time.Date(2026, 3, 14, 3, 14, 0, 0, time.UTC)
	if got := inZone(at, time.UTC); strings.Count(got, "UTC") != 1 {
		t.Errorf("UTC: %q", got)
	}
	riga, _ := time.LoadLocation("Europe/Riga")
	if got := inZone(at, riga); got != "2026-03-14 05:14 EET (Europe/Riga)" {
		t.Errorf("Riga: %q", got)
	}
}
