package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

// startProcs is the test process's GOMAXPROCS before any test ran serve in
// it (tuneRuntime raises it once a process).
var startProcs = runtime.GOMAXPROCS(0)

// TestServeRuntimeDefaults: serve runs one P more than the CPUs it may use,
// with GOGC 400 and a 256 MiB soft memory limit, and reports them in its
// metrics; an operator's GOMAXPROCS, GOGC and GOMEMLIMIT win over them.
func TestServeRuntimeDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	env := func(extra ...string) []string {
		return append([]string{
			"BEET_DATABASE_URL=sqlite://" + filepath.Join(t.TempDir(), "beet.db"),
			"BEET_METRICS_LISTEN=127.0.0.1:0", "BEET_CLEANUP_INTERVAL=0",
		}, extra...)
	}
	cases := []struct {
		name string
		env  []string
		want map[string]int64
	}{
		{"beet's defaults", env("GOMAXPROCS=", "GOGC=", "GOMEMLIMIT="), map[string]int64{
			"go_gc_gogc_percent":     400,
			"go_gc_gomemlimit_bytes": 256 << 20,
		}},
		{"the operator's", env("GOMAXPROCS=1", "GOGC=150", "GOMEMLIMIT=100MiB"), map[string]int64{
			"go_sched_gomaxprocs_threads": 1,
			"go_gc_gogc_percent":          150,
			"go_gc_gomemlimit_bytes":      100 << 20,
		}},
	}
	// The child's own default is this process's as it started (a test that
	// runs serve in this process raises it), unless GOMAXPROCS set it.
	if os.Getenv("GOMAXPROCS") == "" {
		cases[0].want["go_sched_gomaxprocs_threads"] = int64(startProcs + 1)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := spawn(t, c.env)
			if p.admin == "" {
				t.Fatalf("no admin listener:\n%s", p.logs.String())
			}
			m := scrape(t, p.admin)
			for name, want := range c.want {
				if got, ok := gaugeValue(m, name); !ok || got != want {
					t.Errorf("%s = %d (found %v), want %d", name, got, ok, want)
				}
			}
		})
	}
}

// gaugeValue reads an unlabelled metric's integer value from a scrape.
func gaugeValue(scrape, name string) (int64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(scrape)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	return int64(f), err == nil
}
