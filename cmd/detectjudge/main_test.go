package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/backtest"
	"github.com/beethq/beet/internal/detectjudge"
)

func TestRunNeverOnNAB(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-detector", "never", "-families", "nab"}, &out, &errb); code != 0 {
		if strings.Contains(errb.String(), "NAB data not found") {
			t.Skip(errb.String())
		}
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"Command: `go run ./cmd/detectjudge -detector never -families nab`",
		"Split: **TUNING** seeds (seed 1)",
		"| **corpus** | 77838 | 19 | 0 | 0 | 0 | **0.0** | **0.0** | **0.0** |",
		"**Dev score (defaults): 0.0. In-sample best, no rules (defaults): 0.0. Leave-one-file-out: 0.0.**",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}

// TestRunSyntheticSmall runs a tiny held-out judgement of the careful-user
// baseline: it must say which split it ran and find every missed 5-minute run.
func TestRunSyntheticSmall(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-detector", "periodgrace", "-split", "holdout", "-families", "cron-5min", "-streams", "2", "-clean", "1"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"Split: **HELD-OUT** seeds (seed 2)", "| cron-5min | missed 1 run | 2 | 2 | 100% | 100% |",
		"- At most 0.5 false alarms per 1000 beet-days overall: met (0.00).",
		// The yardstick tables and goals: periodgrace watches from day 14, so
		// it finds none of the first-week stops the oracle finds.
		"**Silences against the oracle**", "| cron-5min | stopped 6h on day 2 | 2 | 2 | 0% | 0% |",
		"- median time to detect a silence at most 1.3× the oracle's:", "| **tuned families** |"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "## NAB") {
		t.Errorf("NAB ran without being asked:\n%s", s)
	}
}

// TestRunCronSweep: -cron-sweep reports the sweep's table and nothing
// else (the never detector: the wiring, in a second).
func TestRunCronSweep(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-cron-sweep", "-detector", "never"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"# Cron sweep", "**0 false alarms** in 400 cases", "| `*/20 * * * 1-5` | 0 | 0 |", "America/New_York on Australia/Sydney"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "## NAB") || strings.Contains(s, "beet-days") {
		t.Errorf("more than the sweep ran:\n%s", s)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-detector", "nope"},
		{"-split", "test"},
		{"-families", "poisson-7"},
		{"-nab", "/nonexistent", "-families", "nab"},
		{"-set", "Bogus=1"},
		{"-set", "SurgeYoung=x"},
		{"-set", "SurgeYoung"},
		{"-detector", "never", "-set", "SurgeYoung=1"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no error message", args)
		}
	}
}

// TestSetMovesAutosParameters: -set runs auto on other parameters, and the
// report says so. Alarm levels out of reach find no drop or surge where the
// shipped ones find them.
func TestSetMovesAutosParameters(t *testing.T) {
	found := func(args ...string) (map[string]bool, string) {
		var out, errb bytes.Buffer
		args = append([]string{"-families", "poisson-20", "-streams", "1", "-clean", "0", "-trace"}, args...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		kinds := map[string]bool{}
		for _, line := range strings.Split(errb.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, "incident "); ok && strings.Contains(rest, "found=true") {
				_, kind, _ := strings.Cut(rest, "kind=")
				kind, _, _ = strings.Cut(kind, " ")
				kinds[kind] = true
			}
		}
		return kinds, out.String()
	}
	shipped, s := found()
	if !shipped["surge"] || !shipped["drop"] || !strings.Contains(s, "# Detection judged: `auto`") {
		t.Fatalf("the shipped parameters found %v:\n%.300s", shipped, s)
	}
	if _, s := found("-set", "SurgeYoung=4"); !strings.Contains(s, "# Detection judged: `auto`\n") {
		t.Errorf("the shipped value set is not the live run:\n%.300s", s)
	}
	moved, s := found("-set", "SurgeAlarm=1000, DropAlarm=1000")
	if moved["surge"] || moved["drop"] {
		t.Errorf("alarm levels of 1000 still found %v", moved)
	}
	for _, want := range []string{"# Detection judged: `auto (DropAlarm 13 → 1000, SurgeAlarm 13 → 1000)`", "Run with parameters other than the shipped ones"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%.600s", want, s)
		}
	}
}

// TestDumpIsBacktestInput checks -dump prints a stream that `beet backtest`
// reads back event for event.
func TestDumpIsBacktestInput(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-split", "holdout", "-dump", "startend-daily/stuck 3 runs/1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	points, err := backtest.Parse(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := detectjudge.StreamByName(detectjudge.SeedHoldout, "startend-daily/stuck 3 runs/1")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != len(s.Events) || !points[0].At.Equal(s.Events[0].T) || !strings.Contains(out.String(), `# incident "stuck 3 runs"`) {
		t.Errorf("%d points for %d events:\n%.300s", len(points), len(s.Events), out.String())
	}
	for _, bad := range []string{"nope", "cron-daily/clean/x", "cron-daily/melted/1", "no-family/clean/1"} {
		if code := run([]string{"-dump", bad}, &out, &errb); code == 0 {
			t.Errorf("-dump %q: exit 0", bad)
		}
	}
}

// TestSelectFamiliesGroups: "synthetic" is every family without NAB,
// "untuned" the untuned ones.
func TestSelectFamiliesGroups(t *testing.T) {
	all := detectjudge.Families()
	fams, nab, err := selectFamilies("synthetic")
	if err != nil || nab || len(fams) != len(all) {
		t.Errorf("synthetic: %d of %d families, NAB %v, %v", len(fams), len(all), nab, err)
	}
	fams, nab, err = selectFamilies("untuned,nab")
	if err != nil || !nab || len(fams) == 0 || len(fams) != len(all)-len(detectjudge.Tuned(all)) {
		t.Errorf("untuned,nab: %d families, NAB %v, %v", len(fams), nab, err)
	}
	for _, f := range fams {
		if !f.Untuned {
			t.Errorf("untuned: %s is tuned", f.Name)
		}
	}
}

// TestTraceListsIncidentsAndFalseAlarms: -trace writes one line per
// incident and one per false alarm, as many as the report counts, each
// naming a stream -dump finds.
func TestTraceListsIncidentsAndFalseAlarms(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-detector", "always", "-families", "cron-daily", "-streams", "1", "-clean", "1", "-trace"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var incidents, falses int
	for _, line := range strings.Split(errb.String(), "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "incident":
			incidents++
			name, _, _ := strings.Cut(rest, " detectable=")
			if _, err := detectjudge.StreamByName(detectjudge.SeedTune, name); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			if !strings.Contains(rest, "found=true") {
				t.Errorf("always missed an incident: %q", line)
			}
		case "false":
			falses++
			// The stream's day of the alarm: the always detector alarms
			// at every event, from the first.
			_, day, ok := strings.Cut(rest, " day=")
			if d, err := strconv.ParseFloat(day, 64); !ok || err != nil || d < 0 || d > 60 {
				t.Errorf("%q: no day of the stream", line)
			}
		}
	}
	fam := detectjudge.Families()
	for _, f := range fam {
		if f.Name == "cron-daily" && incidents != len(f.Incidents) {
			t.Errorf("%d incident lines for %d incident kinds", incidents, len(f.Incidents))
		}
	}
	want := fmt.Sprintf("(%d in ", falses)
	if falses == 0 || !strings.Contains(out.String(), want) {
		t.Errorf("%d false alarm lines; the report does not say %q:\n%.600s", falses, want, out.String())
	}
}
