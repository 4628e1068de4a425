package schedule

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cronexpr"
)

// propertyZones mix whole-hour DST (Riga, New York, London), half-hour DST
// (Lord Howe), a 45-minute offset (Chatham), DST at midnight (São Paulo
// until 2019) and zones without DST.
var propertyZones = []string{
	"Europe/Riga", "America/New_York", "Europe/London", "Australia/Lord_Howe",
	"Pacific/Chatham", "America/Sao_Paulo", "Asia/Kolkata", "UTC",
}

// randomExpr draws from a small grammar that reaches every code path: fixed
// and wildcard times, hours inside DST gaps and repeats, restricted days of
// month and week (both, for the and/or rule) and Quartz day forms.
func randomExpr(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	return strings.Join([]string{
		pick("0", "30", "15", "45", "*/15", "*/30", "*/7", "0,30", "5-10", "*"),
		pick("0", "1", "2", "3", "23", "*", "*/2", "1-3", "2,14"),
		pick("*", "*", "*", "1", "15", "31", "*/2", "L"),
		pick("*", "*", "*", "3,10", "11", "2"),
		pick("*", "*", "*", "1-5", "0", "6", "5#2", "mon-fri"),
	}, " ")
}

// wallMatches reports whether the wall clock of t in its location matches c.
func wallMatches(c *Cron, t time.Time) bool {
	y, m, d := t.Date()
	return t.Second() == 0 && c.minutes&(1<<t.Minute()) != 0 && c.hours&(1<<t.Hour()) != 0 &&
		c.months&(1<<m) != 0 && c.dayMask(int64(y), int(m))&(1<<d) != 0
}

// TestNextProperties: for random expressions and random starts over two
// years in several zones, Next is strictly increasing; every slot of a
// wildcard expression is a real instant whose wall clock matches; every
// slot of a fixed-time expression is the first occurrence of a matching wall
// minute or the end of a gap that skipped one; and Prev agrees with Next.
// (TestMatchesVixieLoop checks that no slot is missing.)
func TestNextProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	from := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	span := int64(2 * 365 * 86400)
	runs := 600
	if testing.Short() {
		runs = 100
	}
	for range runs {
		expr := randomExpr(r)
		c, err := ParseCron(expr)
		if err != nil {
			continue // e.g. "0 0 31 2 *" can never match
		}
		zone := propertyZones[r.IntN(len(propertyZones))]
		loc := mustLoc(t, zone)
		start := time.Unix(from+r.Int64N(span), r.Int64N(1e9)).In(loc)

		prev := start
		for i := range 40 {
			got := c.Next(prev, loc)
			if got.IsZero() || !got.After(prev) {
				t.Fatalf("%s %s: Next(%s) = %s, not after", expr, zone, prev.Format(time.RFC3339Nano), got)
			}
			if got.Location() != loc {
				t.Fatalf("%s %s: Next returned location %v", expr, zone, got.Location())
			}
			if c.fixed {
				// A matching wall minute at its first occurrence, or the
				// end of a gap that skipped one.
				start, _ := got.ZoneBounds()
				atWall := wallMatches(c, got) && !earlierOccurrence(got)
				if !atWall && !(got.Equal(start) && gapSkipsMatch(c, got)) {
					t.Fatalf("%s %s: fixed slot %s is neither a first matching wall minute nor a gap's end", expr, zone, got.Format(layout))
				}
			} else if !wallMatches(c, got) {
				t.Fatalf("%s %s: slot %s does not match on the wall clock", expr, zone, got.Format(layout))
			}
			if p := c.Prev(got, loc); !p.Equal(got) {
				t.Fatalf("%s %s: Prev(%s) = %s, want itself", expr, zone, got.Format(layout), p.Format(layout))
			}
			if i > 0 {
				if p := c.Prev(got.Add(-time.Nanosecond), loc); !p.Equal(prev) {
					t.Fatalf("%s %s: Prev(%s - 1ns) = %s, want %s", expr, zone, got.Format(layout), p.Format(layout), prev.Format(layout))
				}
			}
			prev = got
		}
	}
}

// gapSkipsMatch reports whether the clock change at t skipped forward over
// a matching wall minute.
func gapSkipsMatch(c *Cron, t time.Time) bool {
	_, off := t.Zone()
	_, prev := t.Add(-time.Second).Zone()
	for w := t.Unix() + int64(prev); w < t.Unix()+int64(off); w += 60 {
		if wallMatches(c, time.Unix(w, 0).UTC()) {
			return true
		}
	}
	return false
}

// vixieRuns simulates the main loop of Vixie cron's cron.c, waking at every
// minute of (from, to) on loc's clock: a step of one minute runs the jobs of
// the new minute; of 2-5 minutes, those of each minute stepped over; of 6
// minutes to 3 hours forward, the wildcard jobs of the new minute and the
// fixed-time jobs of each minute stepped over; back by up to 3 hours, the
// wildcard jobs only, until the clock passes the minute it had reached;
// larger, the jobs of the new minute. It returns the wake-ups that run c's
// job (one wake-up that runs it for several minutes counts once).
func vixieRuns(c *Cron, loc *time.Location, from, to time.Time) []time.Time {
	f := strings.Fields(c.String())
	wild := strings.HasPrefix(f[0], "*") || strings.HasPrefix(f[1], "*")
	clock := func(t time.Time) int64 {
		_, off := t.In(loc).Zone()
		return floorDiv(t.Unix()+int64(off), 60)
	}
	matches := func(m int64) bool { return wallMatches(c, time.Unix(m*60, 0).UTC()) }
	var runs []time.Time
	t := from.Truncate(time.Minute)
	virtual := clock(t)
	for t = t.Add(time.Minute); t.Before(to); t = t.Add(time.Minute) {
		running := clock(t)
		run := false
		switch diff := running - virtual; {
		case diff == 1, diff > 180, diff < -180:
			virtual, run = running, matches(running)
		case diff > 5:
			run = wild && matches(running)
			for virtual < running {
				virtual++
				run = run || !wild && matches(virtual)
			}
		case diff > 0:
			for virtual < running {
				virtual++
				run = run || matches(virtual)
			}
		default:
			run = wild && matches(running)
		}
		if run {
			runs = append(runs, t)
		}
	}
	return runs
}

// xdtZone is a made-up zone whose summer time is 4 hours ahead (UTC-8 →
// UTC-4 on the second Sunday of March at 02:00, back on the first Sunday of
// November): its gap and repeat are past what cron treats as DST.
func xdtZone(t testing.TB) *time.Location {
	var b bytes.Buffer
	tzif := func() { // a TZif header and data block: no transitions, one type
		b.WriteString("TZif2")
		b.Write(make([]byte, 15))
		for _, n := range []uint32{0, 0, 0, 0, 1, 4} { // isut, isstd, leap, time, type, char
			_ = binary.Write(&b, binary.BigEndian, n)
		}
		_ = binary.Write(&b, binary.BigEndian, int32(-8*3600))
		b.Write([]byte{0, 0})
		b.WriteString("XST\x00")
	}
	tzif() // version 1 block, skipped by readers of version 2
	tzif()
	b.WriteString("\nXST8XDT4,M3.2.0,M11.1.0\n") // every year's rule
	loc, err := time.LoadLocationFromTZData("Test/XDT", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestMatchesVixieLoop: around every clock change of 2017-2018 in several
// zones, Samoa's skipped day and a made-up zone's 4-hour jumps, Next lists
// exactly the minutes at which Vixie cron (simulated) runs the job.
func TestMatchesVixieLoop(t *testing.T) {
	exprs := []string{"0 * * * *", "*/15 * * * *", "*/30 * * * *", "0 */2 * * *", "*/7 * * * 0", "*/30 1 * * *",
		"30 1-3 * * *", "0,30 2 * * *", "45 0,1 * * *", "30 2 * * *", "0 1,2 * * *", "0-59 0-23 * * *", "0 0 * * *",
		"0 12 * * *", "15 0-4 * * *", "5 1-5/2 * * 0"}
	type span struct {
		loc      *time.Location
		from, to time.Time
	}
	var spans []span
	for _, zone := range propertyZones {
		loc := mustLoc(t, zone)
		for _, tr := range transitions(loc, time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)) {
			spans = append(spans, span{loc, tr.Add(-5 * time.Hour), tr.Add(5 * time.Hour)})
		}
	}
	apia := mustLoc(t, "Pacific/Apia")
	spans = append(spans, span{apia, mustTime(t, "2011-12-29T00:00:00-10:00"), mustTime(t, "2012-01-01T00:00:00+14:00")})
	xdt := xdtZone(t)
	for _, tr := range transitions(xdt, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)) {
		spans = append(spans, span{xdt, tr.Add(-6 * time.Hour), tr.Add(6 * time.Hour)})
	}
	if len(spans) < 20 {
		t.Fatalf("only %d clock changes found", len(spans))
	}
	for _, sp := range spans {
		for _, expr := range exprs {
			c := mustCron(t, expr)
			want := vixieRuns(c, sp.loc, sp.from, sp.to)
			var got []time.Time
			for at := c.Next(sp.from, sp.loc); at.Before(sp.to); at = c.Next(at, sp.loc) {
				got = append(got, at)
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s from %s: got %d slots %v, cron runs %d %v", expr, sp.loc, sp.from, len(got), got, len(want), want)
			}
			for i := range got {
				if !got[i].Equal(want[i]) {
					t.Fatalf("%s %s from %s: slot %d = %s, cron runs at %s", expr, sp.loc, sp.from, i, got[i], want[i])
				}
			}
		}
	}
}

// earlierOccurrence reports whether the wall time of t also occurred in the
// zone period before t's (a fall-back repeat that t is the second of).
func earlierOccurrence(t time.Time) bool {
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return false
	}
	before := start.Add(-time.Second)
	_, prevOff := before.Zone()
	_, off := t.Zone()
	u := t.Unix() + int64(off) - int64(prevOff) // the same wall time in the previous period
	prevStart, _ := before.ZoneBounds()
	return u < start.Unix() && (prevStart.IsZero() || u >= prevStart.Unix())
}

// transitions lists the instants in [from, to) at which loc's offset changes.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	for t := from.In(loc); t.Before(to); {
		_, end := t.ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		_, o1 := t.Zone()
		if _, o2 := end.Zone(); o1 != o2 {
			out = append(out, end)
		}
		t = end
	}
	return out
}

// TestMatchesCronexprInUTC checks the parsing into bit sets against cronexpr
// itself: in UTC, where there is no DST to disagree about, Next must give
// cronexpr's answer for every expression of the grammar (which avoids the
// one deliberate difference, a range ending in Sunday 7). Where the day
// fields join with and but cronexpr would join them with or (a field like
// `*/2` with the other restricted), the reference is the first time both
// one-day-field halves of the expression match.
func TestMatchesCronexprInUTC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 2000 {
		expr := randomExpr(r)
		c, err := ParseCron(expr)
		if err != nil {
			continue
		}
		next := cronexpr.MustParse(expr).Next
		if f := strings.Fields(expr); strings.HasPrefix(f[2], "*/") && f[4] != "*" || strings.HasPrefix(f[4], "*/") && f[2] != "*" {
			byDom := cronexpr.MustParse(strings.Join([]string{f[0], f[1], f[2], f[3], "*"}, " "))
			byDow := cronexpr.MustParse(strings.Join([]string{f[0], f[1], "*", f[3], f[4]}, " "))
			next = func(at time.Time) time.Time {
				for t := byDom.Next(at); !t.IsZero(); t = byDom.Next(t) {
					if byDow.Next(t.Add(-time.Second)).Equal(t) {
						return t
					}
				}
				return time.Time{}
			}
		}
		at := time.Unix(from+r.Int64N(50*365*86400), 0).UTC()
		for range 5 {
			want, got := next(at), c.Next(at, time.UTC)
			if !got.Equal(want) {
				t.Fatalf("%s after %s: got %s, cronexpr says %s", expr, at, got, want)
			}
			at = want
		}
	}
}

// TestDayFieldsJoinLikeVixie: the day fields join with and when either
// starts with `*` (a step included), with or when both are restricted and
// neither does, as Vixie cron's DOM_STAR and DOW_STAR flags decide.
func TestDayFieldsJoinLikeVixie(t *testing.T) {
	cases := []struct {
		expr, after string
		want        []string
	}{
		// 2021-03-01 is a Monday: odd days that are weekdays.
		{"0 3 */2 * 1-5", "2021-03-01T00:00:00Z",
			[]string{"2021-03-01T03:00:00Z", "2021-03-03T03:00:00Z", "2021-03-05T03:00:00Z", "2021-03-09T03:00:00Z"}},
		{"0 3 1-5 * */3", "2021-03-01T00:00:00Z", // the 1st to the 5th that are Sun, Wed or Sat
			[]string{"2021-03-03T03:00:00Z", "2021-04-03T03:00:00Z", "2021-04-04T03:00:00Z"}},
		{"0 3 ? * 5", "2021-03-01T00:00:00Z",
			[]string{"2021-03-05T03:00:00Z", "2021-03-12T03:00:00Z"}},
		{"0 0 13 * 5", "2021-08-01T00:00:00Z", // both restricted: the 13th or a Friday
			[]string{"2021-08-06T00:00:00Z", "2021-08-13T00:00:00Z", "2021-08-20T00:00:00Z"}},
		{"0 0 1-31 * 5", "2021-08-01T00:00:00Z", // 1-31 does not start with *: every day
			[]string{"2021-08-02T00:00:00Z", "2021-08-03T00:00:00Z"}},
		// Quartz forms join by the same rule: the third Friday, if odd.
		{"0 12 */2 * 5#3", "2021-03-01T00:00:00Z",
			[]string{"2021-03-19T12:00:00Z", "2021-05-21T12:00:00Z"}},
	}
	for _, tc := range cases {
		c, at := mustCron(t, tc.expr), mustTime(t, tc.after)
		for _, w := range tc.want {
			at = c.Next(at, time.UTC)
			if got := at.Format(layout); got != w {
				t.Errorf("%s: got %s, want %s", tc.expr, got, w)
				break
			}
		}
	}
}

// TestPrevNextBracket: for any instant t, Prev(t) <= t < Next(t) and no slot
// lies strictly between them.
func TestPrevNextBracket(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	from := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 2000 {
		expr := randomExpr(r)
		c, err := ParseCron(expr)
		if err != nil {
			continue
		}
		loc := mustLoc(t, propertyZones[r.IntN(len(propertyZones))])
		at := time.Unix(from+r.Int64N(2*365*86400), r.Int64N(1e9))
		p, n := c.Prev(at, loc), c.Next(at, loc)
		if p.After(at) || !n.After(at) {
			t.Fatalf("%s %v at %s: Prev %s, Next %s", expr, loc, at, p, n)
		}
		if got := c.Next(p, loc); !got.Equal(n) {
			t.Fatalf("%s %v at %s: Next(Prev) = %s, want Next = %s", expr, loc, at, got, n)
		}
	}
}

// TestBeyondTheTzdataTable covers years computed from the zones' TZ rules,
// including the ends of leap years (2040, 2044) where Time.ZoneBounds
// reports a span that misses the instant (golang/go#81583): Next and Prev
// must step through every day without stalling and still match.
func TestBeyondTheTzdataTable(t *testing.T) {
	for _, zone := range []string{"Europe/Riga", "America/New_York", "Australia/Lord_Howe"} {
		loc := mustLoc(t, zone)
		for _, expr := range []string{"30 2 * * *", "0 */6 * * *", "0 0 31 12 *", "0 0 1 1 *"} {
			c := mustCron(t, expr)
			at := time.Date(2039, 12, 1, 0, 0, 0, 0, time.UTC)
			end := time.Date(2045, 2, 1, 0, 0, 0, 0, time.UTC)
			for n := 0; at.Before(end); n++ {
				next := c.Next(at, loc)
				if next.IsZero() || !next.After(at) || n > 10000 {
					t.Fatalf("%s %s: Next(%s) = %s", expr, zone, at.Format(layout), next)
				}
				start, _ := next.ZoneBounds()
				if !wallMatches(c, next) && !(c.fixed && next.Equal(start) && gapSkipsMatch(c, next)) {
					t.Fatalf("%s %s: slot %s does not match", expr, zone, next.Format(layout))
				}
				if p := c.Prev(next.Add(-time.Nanosecond), loc); n > 0 && !p.Equal(at) {
					t.Fatalf("%s %s: Prev(%s - 1ns) = %s, want %s", expr, zone, next.Format(layout), p.Format(layout), at.Format(layout))
				}
				at = next
			}
		}
	}
	// The bad span also must not bend a wall time: the 2040 New Year slot.
	c, riga := mustCron(t, "0 0 1 1 *"), mustLoc(t, "Europe/Riga")
	if got := c.Next(time.Date(2040, 12, 31, 0, 0, 0, 0, time.UTC), riga).Format(layout); got != "2041-01-01T00:00:00+02:00" {
		t.Errorf("New Year 2041 in Riga = %s", got)
	}
}
