package detectjudge

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// The cron sweep: real crontab lines, run by cron on one zone's clock for a
// beet in another (a server's clock and the zone its owner left the beet
// at), each for a year of clean runs, through a detector. Every alarm is a
// false one. The synthetic families draw jobs from a few shapes on the
// beet's own clock; the sweep is where a shape nobody designed for shows
// (a job whose hours cross midnight on the beet's clock was flagged every
// day, one all day on weekdays on another clock every Friday).

// CronSweepLines are the crontab lines swept: every few minutes, hourly,
// daily, weekly, working hours, nights across midnight, weekdays all day,
// all day but for an hour (a backup's).
var CronSweepLines = []string{
	"*/5 * * * *", "0 * * * *", "0 */2 * * *", "0 */4 * * *", "0 8,20 * * *", "0 0 * * *", "0 6 * * *",
	"45 23 * * *", "0 7 * * 1-5", "30 2 * * 6", "0 12 * * 0,3", "*/15 9-17 * * 1-5", "*/30 8-18 * * 1-5",
	"30 8-18/2 * * 1-5", "0 9-17 * * *", "15 7-19 * * 1-6", "*/5 8-20 * * *", "0 18-23 * * 1-5",
	"0 20-23,0-4 * * *", "*/10 22-23,0-5 * * *", "10 1-5 * * *", "*/15 0-6 * * *", "*/20 * * * 1-5",
	"0 */3 * * 1-5", "*/15 0-1,3-23 * * *",
}

// CronSweepClocks are the pairs of the job's clock and the beet's zone.
var CronSweepClocks = [][2]string{
	{"UTC", "UTC"}, {"Europe/Berlin", "Europe/Berlin"}, {"Europe/Berlin", "UTC"}, {"UTC", "Europe/Berlin"},
	{"America/Los_Angeles", "UTC"}, {"America/Los_Angeles", "Europe/Berlin"}, {"America/New_York", "Australia/Sydney"},
	{"Australia/Sydney", "UTC"},
}

// CronSweepStarts are the first days of the years swept (local midnight
// on the job's clock): one in winter, one in summer.
var CronSweepStarts = []string{"2026-01-07", "2026-07-09"}

// cronSweepLate is how late cron's runs report, at most (uniform).
const cronSweepLate = 30 * time.Second

// A CronCase is one line on one clock for one beet, from one start.
type CronCase struct {
	Line, Clock, BeetZone, Start string
}

// A CronResult is a case's alarms over its year: each a false alarm.
type CronResult struct {
	CronCase
	Runs   int
	Alarms []Alarm
}

// CronSweep replays every case (lines × clocks × starts) through detectors
// from factory, on workers goroutines (0: GOMAXPROCS), and returns the results in
// case order.
func CronSweep(factory Factory, lines []string, clocks [][2]string, starts []string, workers int) ([]CronResult, error) {
	var cases []CronCase
	for _, l := range lines {
		for _, c := range clocks {
			for _, s := range starts {
				cases = append(cases, CronCase{Line: l, Clock: c[0], BeetZone: c[1], Start: s})
			}
		}
	}
	out := make([]CronResult, len(cases))
	errs := make([]error, len(cases))
	forEach(len(cases), workers, func(i int) { out[i], errs[i] = runCronCase(factory, cases[i], uint64(i)) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runCronCase replays a year of c's runs, each late by up to cronSweepLate
// (seeded by seed), through a new detector.
func runCronCase(factory Factory, c CronCase, seed uint64) (CronResult, error) {
	expr, err := cronexpr.Parse(c.Line)
	if err != nil {
		return CronResult{}, fmt.Errorf("cron sweep: %q: %w", c.Line, err)
	}
	clock, err := time.LoadLocation(c.Clock)
	if err != nil {
		return CronResult{}, err
	}
	beetLoc, err := time.LoadLocation(c.BeetZone)
	if err != nil {
		return CronResult{}, err
	}
	from, err := time.ParseInLocation("2006-01-02", c.Start, clock)
	if err != nil {
		return CronResult{}, err
	}
	end := from.AddDate(1, 0, 0)
	r := rand.New(rand.NewPCG(seed, 0x5eeb))
	var events []Event
	for t := expr.Next(from.Add(-time.Second)); !t.IsZero() && t.Before(end); t = expr.Next(t) {
		events = append(events, Event{T: t.Add(time.Duration(r.Int64N(int64(cronSweepLate)))), Count: 1})
	}
	name := fmt.Sprintf("%s on %s for %s from %s", c.Line, c.Clock, c.BeetZone, c.Start)
	d := factory(StreamInfo{Name: name, Family: "cron-sweep", Location: beetLoc, Start: from, LearnEnd: from})
	alarms, err := Replay(d, events, end)
	if err != nil {
		return CronResult{}, fmt.Errorf("cron sweep: %s: %w", name, err)
	}
	res := CronResult{CronCase: c, Runs: len(events)}
	for _, a := range alarms {
		if !a.Recovery {
			res.Alarms = append(res.Alarms, a)
		}
	}
	return res, nil
}

// WriteCronSweep writes results as a Markdown table: a row per line, a
// column per clock pair, the alarms of all starts summed.
func WriteCronSweep(w io.Writer, results []CronResult, command string) error {
	var clocks []string
	seen := map[string]bool{}
	rows := map[string]map[string]int{}
	var lines []string
	total, runs := 0, 0
	for _, r := range results {
		col := r.Clock + " on " + r.BeetZone
		if !seen[col] {
			seen[col] = true
			clocks = append(clocks, col)
		}
		if rows[r.Line] == nil {
			rows[r.Line] = map[string]int{}
			lines = append(lines, r.Line)
		}
		rows[r.Line][col] += len(r.Alarms)
		total += len(r.Alarms)
		runs += r.Runs
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Cron sweep\n\n`%s`: each line run by cron for a year (runs up to %s late at random) from each start, on a job's clock for a beet in a zone; every alarm is false.\n\n", command, cronSweepLate)
	fmt.Fprintf(&b, "**%d false alarms** in %d cases, %d runs.\n\n| cron line | %s |\n|---|%s\n", total, len(results), runs, strings.Join(clocks, " | "), strings.Repeat("---:|", len(clocks)))
	for _, l := range lines {
		fmt.Fprintf(&b, "| `%s` |", l)
		for _, c := range clocks {
			fmt.Fprintf(&b, " %d |", rows[l][c])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
