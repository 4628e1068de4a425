package schedule

import (
	"testing"
	"time"
	_ "time/tzdata" // the DST cases must not depend on the host's zoneinfo
)

const layout = "2006-01-02T15:04:05Z07:00"

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustCron(t testing.TB, expr string) *Cron {
	t.Helper()
	c, err := ParseCron(expr)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", expr, err)
	}
	return c
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestNextDST runs fixed-time and wildcard expressions across the clock
// changes of Riga, New York, Berlin, Lord Howe, Samoa and São Paulo, as
// Vixie cron runs them (package documentation), and UTC and weekday cases. Expected times are written with their offsets, and the
// comparison is on the formatted string, so a right instant with the wrong
// offset fails too. Each row also checks Prev against the same sequence.
func TestNextDST(t *testing.T) {
	cases := []struct {
		name, zone, expr, after string
		want                    []string
	}{
		// Riga: 2021-03-28 03:00→04:00, 2021-10-31 04:00→03:00.
		{"riga hourly spring", "Europe/Riga", "0 * * * *", "2021-03-28T01:30:00+02:00",
			[]string{"2021-03-28T02:00:00+02:00", "2021-03-28T04:00:00+03:00"}},
		{"riga hourly fall fires at both 03:00s", "Europe/Riga", "0 * * * *", "2021-10-31T01:30:00+03:00",
			[]string{"2021-10-31T02:00:00+03:00", "2021-10-31T03:00:00+03:00", "2021-10-31T03:00:00+02:00", "2021-10-31T04:00:00+02:00"}},
		{"riga 03:00 in the gap moves to its end", "Europe/Riga", "0 3 * * *", "2021-03-27T01:30:00+02:00",
			[]string{"2021-03-27T03:00:00+02:00", "2021-03-28T04:00:00+03:00", "2021-03-29T03:00:00+03:00"}},
		{"riga 03:00 repeated fires once", "Europe/Riga", "0 3 * * *", "2021-10-31T01:30:00+03:00",
			[]string{"2021-10-31T03:00:00+03:00", "2021-11-01T03:00:00+02:00"}},
		{"riga every 2 hours fall", "Europe/Riga", "0 */2 * * *", "2021-10-31T01:30:00+03:00",
			[]string{"2021-10-31T02:00:00+03:00", "2021-10-31T04:00:00+02:00", "2021-10-31T06:00:00+02:00"}},

		// New York: 2021-03-14 02:00→03:00, 2021-11-07 02:00→01:00.
		{"ny 02:30 in the gap fires once at 03:00", "America/New_York", "30 2 * * *", "2021-03-13T00:00:00-05:00",
			[]string{"2021-03-13T02:30:00-05:00", "2021-03-14T03:00:00-04:00", "2021-03-15T02:30:00-04:00"}},
		{"ny 03:00 exists on the spring night", "America/New_York", "0 3 * * *", "2021-03-13T12:00:00-05:00",
			[]string{"2021-03-14T03:00:00-04:00", "2021-03-15T03:00:00-04:00"}},
		{"ny 02:30 is not ambiguous in the fall", "America/New_York", "30 2 * * *", "2021-11-06T12:00:00-04:00",
			[]string{"2021-11-07T02:30:00-05:00", "2021-11-08T02:30:00-05:00"}},
		{"ny 01:30 repeated fires once, at the first", "America/New_York", "30 1 * * *", "2021-11-06T12:00:00-04:00",
			[]string{"2021-11-07T01:30:00-04:00", "2021-11-08T01:30:00-05:00"}},
		{"ny 01:30 fires once even from between the two", "America/New_York", "30 1 * * *", "2021-11-07T01:45:00-04:00",
			[]string{"2021-11-08T01:30:00-05:00"}},
		{"ny every 30 minutes fall", "America/New_York", "*/30 * * * *", "2021-11-07T00:45:00-04:00",
			[]string{"2021-11-07T01:00:00-04:00", "2021-11-07T01:30:00-04:00", "2021-11-07T01:00:00-05:00", "2021-11-07T01:30:00-05:00", "2021-11-07T02:00:00-05:00"}},
		{"ny every 30 minutes spring skips the gap", "America/New_York", "*/30 * * * *", "2021-03-14T01:15:00-05:00",
			[]string{"2021-03-14T01:30:00-05:00", "2021-03-14T03:00:00-04:00", "2021-03-14T03:30:00-04:00"}},
		{"ny weekdays across the spring weekend", "America/New_York", "0 9 * * 1-5", "2021-03-12T09:00:00-05:00",
			[]string{"2021-03-15T09:00:00-04:00", "2021-03-16T09:00:00-04:00"}},
		// A list of hours is fixed-time too (no field starts with *): Vixie
		// cron runs it once in a repeated hour, and a skipped one at the jump.
		{"ny a list of hours runs once in the repeated hour", "America/New_York", "0 1,13 * * *", "2021-11-06T14:00:00-04:00",
			[]string{"2021-11-07T01:00:00-04:00", "2021-11-07T13:00:00-05:00", "2021-11-08T01:00:00-05:00"}},
		{"ny 1,2 fall", "America/New_York", "0 1,2 * * *", "2021-11-06T12:00:00-04:00",
			[]string{"2021-11-07T01:00:00-04:00", "2021-11-07T02:00:00-05:00", "2021-11-08T01:00:00-05:00"}},
		{"ny 1,2,3 spring: 02:00 runs with 03:00", "America/New_York", "0 1,2,3 * * *", "2021-03-13T12:00:00-05:00",
			[]string{"2021-03-14T01:00:00-05:00", "2021-03-14T03:00:00-04:00", "2021-03-15T01:00:00-04:00"}},
		{"ny wildcard minutes in the repeated hour run twice", "America/New_York", "*/30 1 * * *", "2021-11-06T12:00:00-04:00",
			[]string{"2021-11-07T01:00:00-04:00", "2021-11-07T01:30:00-04:00", "2021-11-07T01:00:00-05:00", "2021-11-07T01:30:00-05:00", "2021-11-08T01:00:00-05:00"}},
		// Berlin: 2021-03-28 02:00→03:00, 2021-10-31 03:00→02:00.
		{"berlin two times in the repeated hour run once each", "Europe/Berlin", "0,30 2 * * *", "2021-10-30T12:00:00+02:00",
			[]string{"2021-10-31T02:00:00+02:00", "2021-10-31T02:30:00+02:00", "2021-11-01T02:00:00+01:00"}},
		{"berlin from the second pass waits for the next day", "Europe/Berlin", "0,30 2 * * *", "2021-10-31T02:10:00+01:00",
			[]string{"2021-11-01T02:00:00+01:00"}},
		{"berlin two times in the gap run at its end, once", "Europe/Berlin", "0,30 2 * * *", "2021-03-27T12:00:00+01:00",
			[]string{"2021-03-28T03:00:00+02:00", "2021-03-29T02:00:00+02:00"}},
		{"berlin a range of hours across the gap", "Europe/Berlin", "15 1-4 * * *", "2021-03-28T00:00:00+01:00",
			[]string{"2021-03-28T01:15:00+01:00", "2021-03-28T03:00:00+02:00", "2021-03-28T03:15:00+02:00", "2021-03-28T04:15:00+02:00"}},
		{"berlin a range of hours across the repeat", "Europe/Berlin", "15 1-4 * * *", "2021-10-31T00:00:00+02:00",
			[]string{"2021-10-31T01:15:00+02:00", "2021-10-31T02:15:00+02:00", "2021-10-31T03:15:00+01:00", "2021-10-31T04:15:00+01:00"}},
		{"berlin hourly runs in both passes", "Europe/Berlin", "15 * * * *", "2021-10-31T01:30:00+02:00",
			[]string{"2021-10-31T02:15:00+02:00", "2021-10-31T02:15:00+01:00", "2021-10-31T03:15:00+01:00"}},

		// UTC has no transitions; strictness: a slot equal to after is skipped.
		{"utc daily", "UTC", "0 2 * * *", "2021-03-28T02:00:00Z",
			[]string{"2021-03-29T02:00:00Z", "2021-03-30T02:00:00Z"}},
		{"utc weekly on Monday", "UTC", "30 6 * * 1", "2021-03-28T23:59:59Z",
			[]string{"2021-03-29T06:30:00Z", "2021-04-05T06:30:00Z"}},

		// Lord Howe moves by 30 minutes: 2021-10-03 02:00→02:30, 2021-04-04 02:00→01:30.
		{"lord howe half-hour gap", "Australia/Lord_Howe", "15 2 * * *", "2021-10-02T12:00:00+10:30",
			[]string{"2021-10-03T02:30:00+11:00", "2021-10-04T02:15:00+11:00"}},
		{"lord howe half-hour repeat", "Australia/Lord_Howe", "45 1 * * *", "2021-04-03T12:00:00+11:00",
			[]string{"2021-04-04T01:45:00+11:00", "2021-04-05T01:45:00+10:30"}},
		// Samoa skipped 2011-12-30 entirely (-10 → +14): a jump of 3 hours or
		// more is a clock correction to cron, and that day's noon never runs.
		{"samoa skipped day", "Pacific/Apia", "0 12 * * *", "2011-12-29T12:00:00-10:00",
			[]string{"2011-12-31T12:00:00+14:00", "2012-01-01T12:00:00+14:00"}},
		// São Paulo sprang forward at midnight (2018-11-04 00:00→01:00).
		{"sao paulo midnight gap", "America/Sao_Paulo", "0 0 * * *", "2018-11-03T12:00:00-03:00",
			[]string{"2018-11-04T01:00:00-02:00", "2018-11-05T00:00:00-02:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loc, c := mustLoc(t, tc.zone), mustCron(t, tc.expr)
			at := mustTime(t, tc.after)
			var got []string
			for range tc.want {
				at = c.Next(at, loc)
				got = append(got, at.Format(layout))
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("%s from %s:\n got %v\nwant %v", tc.expr, tc.after, got, tc.want)
				}
			}
			// Prev is inclusive and walks the same sequence backwards.
			for i, w := range tc.want {
				slot := mustTime(t, w)
				if p := c.Prev(slot, loc); !p.Equal(slot) {
					t.Errorf("Prev(%s) = %s, want itself", w, p.Format(layout))
				}
				if i > 0 {
					if p := c.Prev(slot.Add(-time.Nanosecond), loc); p.Format(layout) != tc.want[i-1] {
						t.Errorf("Prev(%s - 1ns) = %s, want %s", w, p.Format(layout), tc.want[i-1])
					}
				}
			}
		})
	}
}

func TestNextReturnsLoc(t *testing.T) {
	riga := mustLoc(t, "Europe/Riga")
	c := mustCron(t, "0 2 * * *")
	if got := c.Next(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), riga); got.Location() != riga {
		t.Errorf("Next returned a time in %v, want Europe/Riga", got.Location())
	}
	if got := c.Next(time.Date(2021, 1, 1, 0, 0, 0, 0, riga), nil); got.Location() != time.UTC || got.Format(layout) != "2021-01-01T02:00:00Z" {
		t.Errorf("Next with a nil location = %s in %v, want 2021-01-01T02:00:00Z", got.Format(layout), got.Location())
	}
}

func TestNextFarAndRare(t *testing.T) {
	riga := mustLoc(t, "Europe/Riga")
	cases := []struct{ expr, after, want string }{
		{"0 0 29 2 *", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00+02:00"}, // 2100 is not a leap year
		{"0 0 13 * 5", "2021-08-01T00:00:00Z", "2021-08-06T00:00:00+03:00"}, // day 13 OR Friday
		{"0 0 13 * 5", "2021-08-07T00:00:00Z", "2021-08-13T00:00:00+03:00"},
		{"0 12 L * *", "2021-02-01T00:00:00Z", "2021-02-28T12:00:00+02:00"},        // Quartz L, from cronexpr
		{"0 12 * * 5#3", "2021-03-01T00:00:00Z", "2021-03-19T12:00:00+02:00"},      // third Friday
		{"0 12 * * 1-7", "2021-03-06T13:00:00+02:00", "2021-03-07T12:00:00+02:00"}, // 7 is Sunday
	}
	for _, tc := range cases {
		got := mustCron(t, tc.expr).Next(mustTime(t, tc.after), riga)
		if got.Format(layout) != tc.want {
			t.Errorf("%s after %s = %s, want %s", tc.expr, tc.after, got.Format(layout), tc.want)
		}
	}
}
