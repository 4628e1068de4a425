package schedule

import (
	"sync"
	"testing"
	"time"
)

func TestParseCron(t *testing.T) {
	for _, ok := range []string{"0 2 * * *", "*/5 * * * *", "0 9-18 * * 1-5", "@daily", "@hourly", " 30  4 1 * 0 "} {
		if _, err := ParseCron(ok); err != nil {
			t.Errorf("ParseCron(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "* * * *", "0 0 2 * * * *", "61 * * * *", "0 25 * * *", "a b c d e", "@often",
		"0 0 31 2 *", "0 0 30 2 *", "5-2 * * * *", "0 0 * 12-1 *"} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("ParseCron(%q) = nil, want an error", bad)
		}
	}
	if c, _ := ParseCron("@daily"); c.String() != "0 0 * * *" {
		t.Errorf("@daily normalised to %q", c.String())
	}
}

// Fixed follows Vixie cron's MIN_STAR and HR_STAR flags: an expression is
// fixed-time unless its minute or hour field starts with `*`.
func TestParseCronFixed(t *testing.T) {
	for expr, fixed := range map[string]bool{
		"30 2 * * *": true, "0 9 * * 1-5": true, "@daily": true, "0 0 29 2 *": true,
		"0 2,14 * * *": true, "0,30 2 * * *": true, "0 9-17 * * 1-5": true, "0-59 0-23 * * *": true,
		"0 * * * *": false, "@hourly": false, "*/15 * * * *": false, "0 */2 * * *": false, "*/30 1 * * *": false,
		"* 2 * * *": false,
	} {
		if got := mustCron(t, expr).Fixed(); got != fixed {
			t.Errorf("%q: Fixed() = %v, want %v", expr, got, fixed)
		}
	}
}

// A Cron is shared by goroutines (the race detector checks this test):
// evaluating it must not write to it, as cronexpr's Next does.
func TestConcurrentUse(t *testing.T) {
	c, loc := mustCron(t, "0 12 L * *"), mustLoc(t, "Europe/Riga")
	want := c.Next(time.Date(2021, 2, 1, 0, 0, 0, 0, time.UTC), loc)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				c.Next(time.Date(2021, time.Month(1+(i+j)%12), 1, 0, 0, 0, 0, time.UTC), loc)
			}
		})
	}
	wg.Wait()
	if got := c.Next(time.Date(2021, 2, 1, 0, 0, 0, 0, time.UTC), loc); !got.Equal(want) {
		t.Errorf("after concurrent use Next = %s, want %s", got, want)
	}
}
