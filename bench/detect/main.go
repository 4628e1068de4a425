// Command detect is Beet's detection benchmark: it runs a detector over
// seeded synthetic beets with injected incidents and over the NAB count
// series, and prints a Markdown report (time to detect, share detected,
// false alarms per 1000 beet-days, NAB scores).
//
//	go run ./bench/detect -detector periodgrace
//
// To benchmark a new detector, implement harness.Detector, write a
// harness.Factory that builds one per stream, and add it to detectors below.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/beethq/beet/bench/detect/baseline"
	"github.com/beethq/beet/bench/detect/harness"
)

// A detectorEntry is a detector the benchmark can run.
type detectorEntry struct {
	factory harness.Factory
	about   string // one paragraph for the report
}

// detectors is the registry behind -detector.
var detectors = map[string]detectorEntry{
	"auto": {newAuto, "`auto` is Beet's learned model (internal/detect, run through detect.OnEvents and detect.OnDeadline as live): " +
		"event rates per local hour of day for weekdays and weekends, a dispersion index D and a negative-binomial size r of " +
		"hourly counts, a burst unit (calls per 60 s cluster) and the usual gap between calls. Silence when the events expected " +
		"since the last one reach ln(gaps a day / 0.0002) × D; drop (to 0.2×) and surge (to 3×) CUSUMs over negative-binomial " +
		"hours, surges checked as events arrive, drops by deadline; a learned schedule (7 matching gaps covering a day) " +
		"flags a missed run after a grace of at most 10% of the period (any event within a run's window is that run; more than 3 events in one " +
		"cluster suspend the schedule, handing over to the rate model until a run on the schedule resumes it). It arms after 7 days (2 for busy beets). " +
		"An alarm is a flip to down or anomalous; a recovery flip ends it."},
	"never": {baseline.NewNever, "`never` raises no alarm at all: the sanity check (NAB score 0, nothing detected, no false alarm)."},
	"periodgrace": {baseline.NewPeriodGrace, "`periodgrace` is a fixed period + grace check configured as a careful user would from the " +
		"stream's clean learning part (synthetic: the first 28 days; NAB: the probationary rows): period = the longest gap " +
		"between events seen there, rounded up to a human figure (1 min steps up to 10 min, 5 min up to 1 h, 15 min up to 6 h, " +
		"then whole hours); grace = 10% of the period, at least 1 min. It raises `silence` when no event came for period + grace " +
		"and recovers on the next event."},
}

// options are the parsed flags.
type options struct {
	detector    string
	seed        uint64
	families    string
	nabDir      string
	streams     int
	cleanBeets  int
	cleanDays   int
	workers     int
	commandLine string
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	opt, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "detect:", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if err := bench(opt, w, stderr); err != nil {
		w.Flush()
		fmt.Fprintln(stderr, "detect:", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("detect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	names := make([]string, 0, len(detectors))
	for n := range detectors {
		names = append(names, n)
	}
	sort.Strings(names)
	fs.StringVar(&o.detector, "detector", "periodgrace", "detector to evaluate: "+strings.Join(names, "|"))
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic streams")
	fs.StringVar(&o.families, "families", "", "comma-separated families to run (default all; \"nab\" is the NAB corpus)")
	fs.StringVar(&o.nabDir, "nab", "", "NAB data directory (default: ../shared/data/nab from the repository root found above the working directory)")
	fs.IntVar(&o.streams, "streams", 40, "incident streams per family and incident kind")
	fs.IntVar(&o.cleanBeets, "clean", 50, "clean beets per family, for false alarms")
	fs.IntVar(&o.cleanDays, "clean-days", 60, "scored days per clean beet (after 28 learning days)")
	fs.IntVar(&o.workers, "workers", 0, "parallel streams (default GOMAXPROCS)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, ok := detectors[o.detector]; !ok {
		return o, fmt.Errorf("unknown detector %q (have %s)", o.detector, strings.Join(names, ", "))
	}
	if o.streams < 1 || o.cleanBeets < 1 || o.cleanDays < 1 {
		return o, errors.New("-streams, -clean and -clean-days must be positive")
	}
	o.commandLine = "go run ./bench/detect"
	if len(args) > 0 {
		o.commandLine += " " + strings.Join(args, " ")
	}
	return o, nil
}

// bench runs what opt asks for and writes the report to w.
func bench(opt options, w io.Writer, stderr io.Writer) error {
	entry := detectors[opt.detector]
	fams, runNAB, err := selectFamilies(opt.families)
	if err != nil {
		return err
	}
	// Load the NAB data first, so a missing directory fails before minutes
	// of synthetic work.
	var series []harness.NABSeries
	var profiles []harness.Profile
	if runNAB {
		dir, err := nabDir(opt.nabDir)
		if err != nil {
			return err
		}
		if series, err = harness.LoadNAB(dir); err != nil {
			return err
		}
		if profiles, err = harness.LoadProfiles(dir); err != nil {
			return err
		}
	}

	start := time.Now()
	var res *harness.Results
	if len(fams) > 0 {
		cfg := harness.Config{
			Seed: opt.seed, Families: fams, IncidentStreams: opt.streams,
			CleanBeets: opt.cleanBeets, CleanDays: opt.cleanDays, Workers: opt.workers,
		}
		if res, err = harness.Evaluate(cfg, entry.factory); err != nil {
			return err
		}
	}
	var nab []harness.NABFileResult
	if runNAB {
		if nab, err = harness.EvaluateNAB(series, entry.factory, profiles); err != nil {
			return err
		}
	}
	r := report{opt: opt, about: entry.about, families: fams, synth: res, nab: nab, profiles: profiles}
	r.write(w)
	events := 0
	if res != nil {
		events = res.Events
	}
	fmt.Fprintf(stderr, "detect: %s, %d synthetic events replayed in %s\n", opt.detector, events, time.Since(start).Round(time.Millisecond))
	return nil
}

// selectFamilies applies -families; "nab" names the NAB corpus.
func selectFamilies(list string) ([]*harness.Family, bool, error) {
	all := harness.Families()
	if strings.TrimSpace(list) == "" {
		return all, true, nil
	}
	runNAB := false
	var rest []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "nab" {
			runNAB = true
		} else if n != "" {
			rest = append(rest, n)
		}
	}
	if len(rest) == 0 {
		return nil, runNAB, nil
	}
	fams, unknown := harness.FilterFamilies(all, strings.Join(rest, ","))
	if len(unknown) > 0 {
		var have []string
		for _, f := range all {
			have = append(have, f.Name)
		}
		return nil, false, fmt.Errorf("unknown families %q (have %s, nab)", unknown, strings.Join(have, ", "))
	}
	return fams, runNAB, nil
}

// nabDir resolves -nab: as given (relative to the working directory), or by
// default ../shared/data/nab next to the repository root, found by walking
// up from the working directory to this module's go.mod.
func nabDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("nab: %w", err)
		}
		root, err := repoRoot(wd)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "..", "shared", "data", "nab")
	}
	if _, err := os.Stat(filepath.Join(dir, "labels", "combined_windows.json")); err != nil {
		return "", fmt.Errorf("NAB data not found in %s (want labels/combined_windows.json and data/): pass -nab DIR, or leave nab out of -families: %w", dir, err)
	}
	return dir, nil
}

// repoRoot returns the closest directory at or above dir whose go.mod
// declares module github.com/beethq/beet.
func repoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && f[1] == "github.com/beethq/beet" {
					return d, nil
				}
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no github.com/beethq/beet go.mod above %s: run from the repository or pass -nab DIR", dir)
		}
	}
}
