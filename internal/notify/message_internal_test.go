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
