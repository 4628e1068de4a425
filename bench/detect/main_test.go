package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
	for _, want := range []string{"Command: `go run ./bench/detect -detector never -families nab`", "| **corpus** | 77838 | 19 | 0 | 0 | 0 | **0.0** | **0.0** | **0.0** |"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
}

func TestRunSyntheticSmall(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-detector", "periodgrace", "-families", "cron-5min", "-streams", "2", "-clean", "2", "-clean-days", "3"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "| cron-5min | 4 | 100% |") || strings.Contains(s, "## NAB") {
		t.Errorf("unexpected report:\n%s", s)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-detector", "nope"},
		{"-families", "poisson-7"},
		{"-nab", "/nonexistent", "-families", "nab"},
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

func TestFmtTTD(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                 "45s",
		3*time.Minute + 10*time.Second:   "3m10s",
		2*time.Hour + 5*time.Minute:      "2h05m",
		26*time.Hour + 59*time.Minute:    "1d02h",
		time.Hour - 200*time.Millisecond: "1h00m",
	} {
		if got := fmtTTD(d); got != want {
			t.Errorf("fmtTTD(%v) = %q, want %q", d, got, want)
		}
	}
}
