package backtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/backtest"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

func TestParse(t *testing.T) {
	pts, err := backtest.Parse(strings.NewReader("# comment\n\n2026-01-01T00:00:00Z\n1767225660,3\n2026-01-01T00:02:00.5+00:00, 0\n"))
	if err != nil || len(pts) != 3 || pts[1].Count != 3 || !pts[1].At.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) || pts[2].Count != 0 {
		t.Fatalf("Parse = %+v, %v", pts, err)
	}
	for input, want := range map[string]string{
		"soon\n":                    "line 1:",
		"2026-01-01T00:00:00Z,x\n":  "line 1: count",
		"2026-01-01T00:00:00Z,-1\n": "line 1: count",
		"2026-01-02T00:00:00Z\n2026-01-01T00:00:00Z\n": "line 2:",
		strings.Repeat("9", 2000) + "\n":               "longer than",
		// Past year 9999, which RFC 3339 cannot write: refused, with the
		// line, not turned into a 1677 date.
		"# h\n253402300800\n":    "line 2: 253402300800 Unix seconds is after 9999-12-31T23:59:59Z",
		"1767225660000\n":        "line 1: 1767225660000 Unix seconds is after 9999-12-31T23:59:59Z, the last time Beet reads (milliseconds?",
		"99999999999999999999\n": "line 1: 99999999999999999999 Unix seconds is after",
		"1e9\n":                  `line 1: "1e9" is not an RFC 3339 time or Unix seconds (digits, with an optional .fraction)`,
		"1.7672256E+09\n":        "line 1: \"1.7672256E+09\" is not",
		"+1767225660\n":          "line 1: \"+1767225660\" is not",
		"0x1p30\n":               "line 1: \"0x1p30\" is not",
		"1767225660.\n":          "line 1: \"1767225660.\" is not",
		"-1\n":                   "line 1: \"-1\" is not",
	} {
		if _, err := backtest.Parse(strings.NewReader(input)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%.30q) = %v, want an error with %q", input, err, want)
		}
	}
	// Unix seconds past 2262 (int64 nanoseconds) are their real date, and
	// a fraction (date +%s.%N) is kept to the microsecond.
	for input, want := range map[string]time.Time{
		"9999999999":           time.Date(2286, 11, 20, 17, 46, 39, 0, time.UTC),
		"253402300799":         time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"1767225660.123456789": time.Date(2026, 1, 1, 0, 1, 0, 123456000, time.UTC),
		"0":                    time.Unix(0, 0).UTC(),
	} {
		pts, err := backtest.Parse(strings.NewReader(input + "\n"))
		if err != nil || len(pts) != 1 || !pts[0].At.Equal(want) {
			t.Errorf("Parse(%q) = %+v, %v; want %s", input, pts, err, want.Format(time.RFC3339Nano))
		}
	}
}

// TestBacktestMatchesLive feeds random event streams to a backtest and to
// a live beet on a real store (events committed and observed one by one,
// the sweeper running at random moments in between, as it does live), and
// checks both give the same flips.
func TestBacktestMatchesLive(t *testing.T) {
	settings := []beet.Detection{
		{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300},
		{Mode: beet.ModePeriod, PeriodSeconds: 60, GraceSeconds: 0},
		{Mode: beet.ModeCron, Cron: "30 2 * * *", Timezone: "Europe/Riga", GraceSeconds: 600},
		{Mode: beet.ModeCron, Cron: "*/15 * * * *", Timezone: "America/New_York", GraceSeconds: 120},
		{Mode: beet.ModeAuto},
	}
	for seed := range uint64(8) {
		d := settings[seed%uint64(len(settings))]
		t.Run(fmt.Sprintf("seed %d %s", seed, d.Mode), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			// Around the 2021 spring-forward night in both zones.
			start := time.Date(2021, 3, 10, 0, 0, 0, 0, time.UTC)
			gapScale := time.Duration(d.PeriodSeconds) * time.Second
			if gapScale == 0 {
				gapScale = 20 * time.Minute
			}
			var points []backtest.Point
			at := start
			for range 150 {
				// Mostly on time, sometimes late, sometimes a long silence.
				g := time.Duration(rng.Float64() * float64(gapScale))
				if rng.IntN(6) == 0 {
					g = time.Duration(float64(gapScale) * (1 + 3*rng.Float64()))
				}
				if d.Mode == beet.ModeCron && d.Cron == "30 2 * * *" {
					g = time.Duration(20+rng.IntN(30)) * time.Hour
				}
				at = at.Add(g + time.Second).Truncate(time.Microsecond)
				points = append(points, backtest.Point{At: at, Count: 1})
			}
			until := at.Add(3 * gapScale)

			want, _, err := backtest.Run(beet.Beet{Timezone: "UTC", Detection: d}, points, until)
			if err != nil {
				t.Fatal(err)
			}
			got := live(t, d, points, until, rng)
			if len(got) != len(want) {
				t.Fatalf("live gave %d flips, backtest %d\nlive: %v\nbacktest: %v", len(got), len(want), brief(got), brief(want))
			}
			for i := range want {
				w, g := want[i], got[i]
				if !w.At.Equal(g.At) || w.From != g.From || w.To != g.To || w.Kind != g.Kind || w.Reason != g.Reason {
					t.Fatalf("flip %d: live %v, backtest %v", i, brief(got[i:i+1]), brief(want[i:i+1]))
				}
			}
			if len(want) < 2 && d.Mode != beet.ModeAuto {
				t.Fatalf("only %d flips: the stream exercised nothing", len(want))
			}
		})
	}
}

// live runs the points through the service over a real SQLite store.
func live(t *testing.T, d beet.Detection, points []backtest.Point, until time.Time, rng *rand.Rand) []beet.Flip {
	ctx := context.Background()
	store := testdb.New(t, "sqlite")
	svc := service.New(store, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	a, _, err := svc.CreateAccount(ctx, "live@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "b", Detection: &d})
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(now time.Time) {
		if _, _, err := svc.Sweep(ctx, now, now, 100); err != nil {
			t.Fatal(err)
		}
	}
	prev := points[0].At
	for i, p := range points {
		// The sweeper ran at some moments between the events, or not at all.
		if rng.IntN(2) == 0 && p.At.After(prev) {
			sweep(prev.Add(time.Duration(rng.Int64N(int64(p.At.Sub(prev))))))
		}
		ev := beet.Event{ID: beet.EventID{byte(i), byte(i >> 8), 1}, BeetID: b.ID, ReceivedAt: p.At, Method: "GET"}
		if err := store.AddEvents(ctx, []beet.Event{ev}, svc.ObserveEvents); err != nil {
			t.Fatal(err)
		}
		prev = p.At
	}
	sweep(until)
	flips, err := store.FindFlips(ctx, b.ID, beet.MaxPageLimit)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]beet.Flip, len(flips))
	for i, f := range flips { // newest first → time order
		out[len(flips)-1-i] = *f
	}
	return out
}

// TestBacktestMatchesLiveAuto: a learned beet over ten days, long enough
// to arm, with a six-hour outage, gives the same flips both ways.
func TestBacktestMatchesLiveAuto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	d := beet.Detection{Mode: beet.ModeAuto}
	at := time.Date(2021, 3, 20, 0, 0, 0, 0, time.UTC)
	var points []backtest.Point
	for at.Before(time.Date(2021, 3, 30, 0, 0, 0, 0, time.UTC)) {
		at = at.Add(time.Duration(rng.ExpFloat64() * float64(6*time.Minute))).Truncate(time.Microsecond)
		if at.After(time.Date(2021, 3, 28, 10, 0, 0, 0, time.UTC)) && at.Before(time.Date(2021, 3, 28, 16, 0, 0, 0, time.UTC)) {
			continue // the outage
		}
		points = append(points, backtest.Point{At: at, Count: 1})
	}
	want, _, err := backtest.Run(beet.Beet{Timezone: "UTC", Detection: d}, points, at)
	if err != nil {
		t.Fatal(err)
	}
	got := live(t, d, points, at, rng)
	if brief(got) != brief(want) {
		t.Fatalf("live:%s\nbacktest:%s", brief(got), brief(want))
	}
	kinds := map[beet.FlipKind]bool{}
	for _, f := range want {
		kinds[f.Kind] = true
	}
	if !kinds[beet.FlipLearned] || !kinds[beet.FlipSilence] || !kinds[beet.FlipRecovery] {
		t.Fatalf("flips %s: want learned, silence and recovery", brief(want))
	}
}

func brief(fs []beet.Flip) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s→%s %s %q", f.At.Format(time.RFC3339), f.From, f.To, f.Kind, f.Reason)
	}
	return b.String()
}

// FuzzParse: no input panics, and what parses is in time order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "#\n", "2026-01-01T00:00:00Z,2\n1767225660\n", "1,1\n0,1\n", "x,y,z\n", "\xff\n",
		"9999999999\n", "253402300800\n", "1e9\n", "1767225660.123456789,2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pts, err := backtest.Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whole Unix seconds are read as exactly that second.
		if sec, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && len(pts) == 1 && pts[0].At.Unix() != sec {
			t.Fatalf("%q read as %s", s, pts[0].At)
		}
		for i := 1; i < len(pts); i++ {
			if pts[i].At.Before(pts[i-1].At) || pts[i].Count < 0 {
				t.Fatalf("out of order or negative: %+v", pts)
			}
		}
	})
}
