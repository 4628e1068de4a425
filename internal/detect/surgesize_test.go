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

// TestSurgeHoursDoNotTeachSmoothSize: the first hours of a surge of a
// smooth beet (2 events an hour, fourfold for 3 hours: 144 beets) do not
// teach its size (sizeHoldNats), so the hours after them are still read
// as near Poisson: 83 of the 144 surges are flagged, 79 when they taught
// it.
func TestSurgeHoursDoNotTeachSmoothSize(t *testing.T) {
	found := 0
	for stream := uint64(40); stream < 46; stream++ {
		f, _ := slowSurgesFlagged(t, stream)
		found += f
	}
	if found < 82 {
		t.Fatalf("%d of 144 surges flagged, want 82", found)
	}
}

// TestQuietFirstHoursAreNoSurgeBaseline: a beet of 100 events an hour,
// negative binomial of size 1.5, whose weekend 10:00 came almost empty on
// its first weekend by chance (1 and 0 events). Read against the rate those
// hours taught, an ordinary 10:00 the next Saturday was a surge of over 100
// times normal (6 of 6 flagged); a real surge in that hour (ten times its
// neighbours) is still flagged.
func TestQuietFirstHoursAreNoSurgeBaseline(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) // a Monday
	surges := func(seed uint64, tenth int) bool {
		r := rand.New(rand.NewPCG(seed+1, 41))
		a := newAutoBeet("UTC")
		h := a.negbinHours(t, r, t0, 5*24+10, 100, 1, 1.5)
		for _, quiet := range []int{1, 0} {
			a.hourOfEvents(t, r, h, quiet)
			h = a.negbinHours(t, r, h.Add(time.Hour), 23, 100, 1, 1.5)
		}
		h = a.negbinHours(t, r, h, 5*24, 100, 1, 1.5)
		if a.b.Status != beet.StatusUp {
			t.Fatalf("beet %d: %s before the Saturday: %+v", seed, a.b.Status, a.flips)
		}
		a.hourOfEvents(t, r, h, tenth)
		a.negbinHours(t, r, h.Add(time.Hour), 1, 100, 1, 1.5)
		for _, f := range a.since(h) {
			if f.Kind == beet.FlipSurge {
				return true
			}
		}
		return false
	}
	falseSurges, found := 0, 0
	for seed := range uint64(6) {
		if surges(seed, 100) {
			falseSurges++
		}
		if surges(seed, 1000) {
			found++
		}
	}
	if falseSurges > 0 || found < 6 {
		t.Fatalf("an ordinary hour after quiet first ones: %d of 6 flagged as surges, want 0; ten times the neighbours: %d of 6 flagged, want 6", falseSurges, found)
	}
}
