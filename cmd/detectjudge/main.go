// Command detectjudge judges Beet's detection: it runs a detector over
// seeded synthetic beets with labelled incidents (the tuning or the held-out
// split of the seeds) and over the NAB count series (dev score and
// leave-one-file-out), and prints a Markdown report. From the repository root:
//
//	go run ./cmd/detectjudge                       # auto, tuning split, every family, NAB
//	go run ./cmd/detectjudge -split holdout        # the numbers to report
//	go run ./cmd/detectjudge -detector periodgrace -families cron-daily,poisson-20
//
// How it measures (families, splits, yardsticks) is in docs/EVALUATION.md.
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

	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/detectjudge"
)

// A detectorEntry is a detector the judge can run.
type detectorEntry struct {
	factory detectjudge.Factory
	tunings func() []detectjudge.Tuning // parameter sets for NAB leave-one-out; nil: the factory alone
	about   string
}

// detectors is the registry behind -detector.
var detectors = map[string]detectorEntry{
	"auto": {detectjudge.NewAuto(detectjudge.LiveEngine), detectjudge.AutoTunings,
		"`auto` is Beet's learned model: each stream is a new beet in auto mode, run through `detect.ApplyEvents` for every event " +
			"and `detect.ApplyDeadlines` as time passes, the very functions the live service and `beet backtest` call. " +
			"A flip to down or anomalous is an alarm, a flip back to up its recovery, and the first flip out of learning is when it armed."},
	"never":  {detectjudge.NewNever, nil, "`never` raises no alarm at all: a sanity check (nothing found, no false alarm, NAB 0)."},
	"always": {detectjudge.NewAlways, nil, "`always` raises an alarm at every event: a sanity check (false alarms beyond counting)."},
	"periodgrace": {detectjudge.NewPeriodGrace, detectjudge.PeriodGraceTunings,
		"`periodgrace` is a fixed period + grace check set up as a careful user would after watching the stream's opening part " +
			"(synthetic: the first 14 days; NAB: the probationary rows): period = the longest gap between events seen there, rounded up " +
			"to a human figure; grace = 10% of the period, at least 1 min. It watches from then on, raises `silence` when no event came " +
			"for period + grace, and recovers on the next event."},
}

// options are the parsed flags.
type options struct {
	detector    string
	split       string
	seed        uint64
	families    string
	nabDir      string
	streams     int
	clean       int
	workers     int
	armDays     float64
	armEvents   int
	lofo        bool
	windows     bool
	screen      bool
	dump        string
	cronSweep   bool
	trace       bool
	set         string         // -set as given
	params      *detect.Params // auto's parameters when -set moved them, else nil (the shipped ones)
	commandLine string
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	opt, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "detectjudge:", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if err := judge(opt, w, stderr); err != nil {
		w.Flush()
		fmt.Fprintln(stderr, "detectjudge:", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("detectjudge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	names := make([]string, 0, len(detectors))
	for n := range detectors {
		names = append(names, n)
	}
	sort.Strings(names)
	fs.StringVar(&o.detector, "detector", "auto", "detector to judge: "+strings.Join(names, "|"))
	fs.StringVar(&o.split, "split", detectjudge.SplitTune, "seeds: tune (choose parameters on these) or holdout (report these, never tune on them)")
	fs.Uint64Var(&o.seed, "seed", 0, "a custom seed instead of -split (for exploring; reports say it is neither split)")
	fs.StringVar(&o.families, "families", "", "comma-separated families to run (default all; \"nab\" is the NAB corpus, \"synthetic\" every synthetic family, \"untuned\" the untuned ones)")
	fs.StringVar(&o.nabDir, "nab", "", "NAB data directory (default: ../shared/data/nab from the repository root found above the working directory)")
	fs.IntVar(&o.streams, "streams", 12, "streams per family and incident kind")
	fs.IntVar(&o.clean, "clean", 12, "streams per family with no incident")
	fs.IntVar(&o.workers, "workers", 0, "streams replayed in parallel (default GOMAXPROCS)")
	fs.Float64Var(&o.armDays, "arm-days", detectjudge.DefaultArmDays, "the arming bound: the first event at least this many days after the first event…")
	fs.IntVar(&o.armEvents, "arm-events", detectjudge.DefaultArmEvents, "…once this many events came (auto's documented bound: 14 days, given 5 events)")
	fs.BoolVar(&o.lofo, "lofo", true, "with NAB: also the leave-one-file-out score")
	fs.BoolVar(&o.windows, "windows", false, "with NAB: also list every labelled window (found or not, how late, what it paid, events seen against expected) and every false-positive row")
	fs.BoolVar(&o.screen, "screen", true, "leave-one-out: a set chosen on five files must also keep the synthetic tuning seeds within the false-alarm goals (a full synthetic run per set that passes the NAB rules; false: seconds, not screened)")
	fs.BoolVar(&o.trace, "trace", false, "also write to stderr one line per synthetic incident (found, time to detect, the yardstick's) and per false alarm (its time, kind and day of the stream), each naming its stream for -dump")
	fs.BoolVar(&o.cronSweep, "cron-sweep", false, "replay a year of real crontab lines, each on a job's clock for a beet in a zone, and report the false alarms per line and clock, and nothing else")
	fs.StringVar(&o.set, "set", "", "run auto with parameters other than the shipped ones, e.g. SurgeYoung=8,DropAlarm=11.5 (detect.Params fields; for trying a change, never for a figure to report)")
	fs.StringVar(&o.dump, "dump", "", "print one stream (a name from a report, e.g. cron-hourly/clean/3) as `beet backtest` input, and nothing else")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, ok := detectors[o.detector]; !ok {
		return o, fmt.Errorf("unknown detector %q (have %s)", o.detector, strings.Join(names, ", "))
	}
	if strings.TrimSpace(o.set) != "" {
		if o.detector != "auto" {
			return o, fmt.Errorf("-set moves auto's parameters; -detector is %q", o.detector)
		}
		v, err := detectjudge.SetFields(detect.DefaultParams(), o.set)
		if err != nil {
			return o, fmt.Errorf("-set: %w", err)
		}
		if p := v.(detect.Params); p != detect.DefaultParams() { // values as shipped: the live run
			o.params = &p
		}
	}
	if o.seed == 0 {
		seed, ok := detectjudge.SeedOf(o.split)
		if !ok {
			return o, fmt.Errorf("unknown split %q (have %s, %s)", o.split, detectjudge.SplitTune, detectjudge.SplitHoldout)
		}
		o.seed = seed
	} else {
		o.split = ""
	}
	if o.streams < 1 || o.clean < 0 || o.armEvents < 0 || o.armDays < 0 {
		return o, errors.New("-streams must be positive; -clean, -arm-days and -arm-events not negative")
	}
	o.commandLine = "go run ./cmd/detectjudge"
	if len(args) > 0 {
		o.commandLine += " " + strings.Join(args, " ")
	}
	return o, nil
}

// judge runs what opt asks for and writes the report to w.
func judge(opt options, w io.Writer, stderr io.Writer) error {
	if opt.dump != "" {
		s, err := detectjudge.StreamByName(opt.seed, opt.dump)
		if err != nil {
			return err
		}
		return s.WriteCSV(w)
	}
	entry, name := detectors[opt.detector], opt.detector
	if p := opt.params; p != nil {
		moved := detectjudge.VariantName(detect.DefaultParams(), *p)
		name = fmt.Sprintf("%s (%s)", opt.detector, moved)
		entry = detectorEntry{detectjudge.NewAutoAt(*p), func() []detectjudge.Tuning { return detectjudge.AutoTuningsAt(*p) },
			entry.about + " **Run with parameters other than the shipped ones: " + moved + "** (`-set`; leave-one-file-out moves them from there)."}
	}
	if opt.cronSweep {
		res, err := detectjudge.CronSweep(entry.factory, detectjudge.CronSweepLines, detectjudge.CronSweepClocks, detectjudge.CronSweepStarts, opt.workers)
		if err != nil {
			return err
		}
		return detectjudge.WriteCronSweep(w, res, opt.commandLine)
	}
	fams, runNAB, err := selectFamilies(opt.families)
	if err != nil {
		return err
	}
	// Load the NAB data first, so a missing directory fails before minutes
	// of synthetic work.
	var series []detectjudge.NABSeries
	var profiles []detectjudge.Profile
	if runNAB {
		dir, err := nabDir(opt.nabDir)
		if err != nil {
			return err
		}
		if series, err = detectjudge.LoadNAB(dir); err != nil {
			return err
		}
		if profiles, err = detectjudge.LoadProfiles(dir); err != nil {
			return err
		}
	}
	rep := detectjudge.Report{Command: opt.commandLine, Detector: name, About: entry.about, Split: opt.split,
		Config: detectjudge.Config{Seed: opt.seed, Families: fams, IncidentStreams: opt.streams, CleanStreams: opt.clean,
			Workers: opt.workers, ArmDays: opt.armDays, ArmEvents: opt.armEvents}}
	start := time.Now()
	if len(fams) > 0 {
		if rep.Synth, err = detectjudge.Evaluate(rep.Config, entry.factory); err != nil {
			return err
		}
		rep.Elapsed = time.Since(start)
		fmt.Fprintf(stderr, "detectjudge: %s, %d synthetic events replayed in %s\n", name, rep.Synth.Events, rep.Elapsed.Round(time.Millisecond))
		if opt.trace {
			writeTrace(stderr, rep.Synth)
		}
	}
	if runNAB {
		if rep.NAB, err = detectjudge.EvaluateNAB(series, entry.factory, profiles); err != nil {
			return err
		}
		rep.Profiles = profiles
		if opt.lofo {
			tunings := []detectjudge.Tuning{{Name: "defaults", Factory: entry.factory}}
			if entry.tunings != nil {
				tunings = entry.tunings()
			}
			rules := detectjudge.DefaultLOFORules
			if opt.screen {
				rules.Synthetic = syntheticScreen(opt, rep, tunings, stderr)
			}
			l, err := detectjudge.LeaveOneOut(series, tunings, profiles[0], opt.workers, rules)
			if err != nil {
				return err
			}
			rep.LOFO = &l
		}
	}
	rep.Write(w)
	if runNAB && opt.windows {
		ws, err := detectjudge.NABWindows(series, entry.factory, profiles[0])
		if err != nil {
			return err
		}
		detectjudge.WriteNABWindows(w, ws)
		fps, err := detectjudge.NABFalsePositives(series, entry.factory, profiles[0])
		if err != nil {
			return err
		}
		detectjudge.WriteNABFalsePositives(w, fps)
	}
	fmt.Fprintf(stderr, "detectjudge: done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// syntheticScreen returns the leave-one-out's synthetic check: tuning t
// replayed over every family on the tuning seeds (never the held-out ones,
// whatever -split says) keeps the false-alarm goals, or is no worse than
// the defaults where they miss them. The defaults' run is this run's when
// it was the same (the tuning split, every family), else made once, only
// when a tuning misses a goal.
func syntheticScreen(opt options, rep detectjudge.Report, tunings []detectjudge.Tuning, stderr io.Writer) func(int) (bool, string) {
	cfg := rep.Config
	// The untuned families stay out of any tuning, this screen included.
	cfg.Seed, cfg.Families = detectjudge.SeedTune, detectjudge.Tuned(detectjudge.Families())
	var base *detectjudge.Results
	if rep.Synth != nil && rep.Config.Seed == detectjudge.SeedTune && len(rep.Config.Families) == len(detectjudge.Families()) {
		base = rep.Synth
	}
	return func(t int) (bool, string) {
		start := time.Now()
		res, err := detectjudge.Evaluate(cfg, tunings[t].Factory)
		if err != nil {
			return false, err.Error()
		}
		ok, why := detectjudge.KeepsSyntheticGoals(res, nil)
		if !ok && base == nil {
			// A family over its goal may be no worse than the defaults.
			if base, err = detectjudge.Evaluate(cfg, tunings[0].Factory); err != nil {
				return false, err.Error()
			}
		}
		if !ok {
			ok, why = detectjudge.KeepsSyntheticGoals(res, base)
		}
		fmt.Fprintf(stderr, "detectjudge: leave-one-out: %s screened on the synthetic tuning seeds in %s: %v %s\n",
			tunings[t].Name, time.Since(start).Round(time.Second), ok, why)
		return ok, why
	}
}

// selectFamilies applies -families; "nab" names the NAB corpus,
// "synthetic" every synthetic family and "untuned" the untuned ones.
func selectFamilies(list string) ([]*detectjudge.Family, bool, error) {
	all := detectjudge.Families()
	if strings.TrimSpace(list) == "" {
		return all, true, nil
	}
	runNAB := false
	var rest []string
	for _, n := range strings.Split(list, ",") {
		switch n = strings.TrimSpace(n); n {
		case "nab":
			runNAB = true
		case "synthetic", "untuned":
			for _, f := range all {
				if n == "synthetic" || f.Untuned {
					rest = append(rest, f.Name)
				}
			}
		case "":
		default:
			rest = append(rest, n)
		}
	}
	if len(rest) == 0 {
		return nil, runNAB, nil
	}
	fams, unknown := detectjudge.FilterFamilies(all, strings.Join(rest, ","))
	if len(unknown) > 0 {
		var have []string
		for _, f := range all {
			have = append(have, f.Name)
		}
		return nil, false, fmt.Errorf("unknown families %q (have %s, nab, synthetic, untuned)", unknown, strings.Join(have, ", "))
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

// writeTrace lists every synthetic incident and false alarm, one line
// each, for reading a report's figures back to the streams behind them:
//
//	incident negbin-5/outage 6h/3 detectable=true found=true kind=silence ttd=3h10m5s yard=true yttd=2h50m0s learning=false ingrace=false
//	false negbin-5/clean/7 2026-03-07T18:00:37Z drop day=4.8
func writeTrace(w io.Writer, res *detectjudge.Results) {
	for _, o := range res.Incidents {
		fmt.Fprintf(w, "incident %s detectable=%t found=%t kind=%s ttd=%s yard=%t yttd=%s learning=%t ingrace=%t alarms=%d\n",
			o.Stream, o.Detectable, o.Detected, o.Kind, o.TTD.Round(time.Second), o.YardFound, o.YardTTD.Round(time.Second), o.Learning, o.InGrace, o.Alarms)
	}
	for _, s := range res.Streams {
		for _, a := range s.False {
			fmt.Fprintf(w, "false %s %s %s day=%.1f\n", s.Name, a.At.UTC().Format(time.RFC3339), a.Kind, a.At.Sub(s.First).Hours()/24)
		}
	}
}
