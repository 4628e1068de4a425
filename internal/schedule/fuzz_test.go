package schedule

import (
	"testing"
	"time"
)

// FuzzCron feeds ParseCron any text and a zone name: it never panics, and
// an accepted expression's Next is strictly after the instant (a matching
// wall minute unless DST moved it), and Prev of that slot is the slot.
func FuzzCron(f *testing.F) {
	for _, s := range []struct {
		expr, zone string
		at         int64
	}{
		{"0 2 * * *", "Europe/Riga", 1616889600},
		{"0 * * * *", "Europe/Riga", 1635633000},
		{"*/5 * * * *", "UTC", 0},
		{"@daily", "America/New_York", 1710054000},
		{"0 0 29 2 *", "Australia/Lord_Howe", 951782400},
		{"0 0 L * *", "Pacific/Apia", 1325239200},
		{"0 9-18 * * MON-FRI", "Asia/Kolkata", -1},
		{"0 0 * * 5#3", "", 4102444800},
		{"59 23 31 12 *", "Local", 253402300799},
	} {
		f.Add(s.expr, s.zone, s.at)
	}
	f.Fuzz(func(t *testing.T, expr, zone string, at int64) {
		c, err := ParseCron(expr)
		if err != nil {
			return
		}
		if _, err := ParseCron(c.String()); err != nil {
			t.Fatalf("ParseCron(%q) accepted, its normal form %q refused: %v", expr, c.String(), err)
		}
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return
		}
		// Keep the instant in years time.Time formats (0001 to 9999).
		const lo, hi = -62135596800, 253402300799
		at = lo + (at%(hi-lo)+(hi-lo))%(hi-lo)
		after := time.Unix(at, 0)
		next := c.Next(after, loc)
		if next.IsZero() {
			return
		}
		if !next.After(after) {
			t.Fatalf("%q in %s: Next(%v) = %v, not after", expr, zone, after, next)
		}
		// A fixed time that falls in a spring-forward gap moves past the
		// gap, so only wildcard expressions must match the wall clock.
		if !c.Fixed() && !wallMatches(c, next.In(loc)) {
			t.Fatalf("%q in %s: Next(%v) = %v does not match", expr, zone, after, next)
		}
		if prev := c.Prev(next, loc); !prev.Equal(next) {
			t.Fatalf("%q in %s: Prev(Next = %v) = %v, want the same slot", expr, zone, next, prev)
		}
	})
}
