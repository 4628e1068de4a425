package app_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	metricLiteral = regexp.MustCompile(`"(beet_[a-z0-9_]+)"`)
	metricUse     = regexp.MustCompile(`\bbeet_[a-z0-9_]+`)
)

// exportedMetrics lists the metric names (and name prefixes, ending in _)
// written as string literals in the packages that register metrics.
func exportedMetrics(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, dir := range []string{".", "../ratelimit"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range metricLiteral.FindAllStringSubmatch(string(b), -1) {
				names = append(names, m[1])
			}
		}
	}
	return names
}

func exported(names []string, use string) bool {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(use, suffix); ok && exported(names, base) {
			return true
		}
	}
	for _, n := range names {
		if n == use || strings.HasSuffix(n, "_") && strings.HasPrefix(use, n) {
			return true
		}
	}
	return false
}

// TestDeployMonitoring: the Grafana dashboard is valid JSON whose panels
// all query something, and every beet_* metric the dashboard and the alert
// rules use is one Beet exports (a renamed metric breaks this test, not a
// dashboard in production). With promtool installed, the rules load and
// their unit tests pass.
func TestDeployMonitoring(t *testing.T) {
	names := exportedMetrics(t)
	dash, err := os.ReadFile("../../deploy/grafana/beet.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatalf("deploy/grafana/beet.json: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	rules, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rules), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			exprs = append(exprs, line)
		}
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, m := range metricUse.FindAllString(e, -1) {
			if !strings.HasSuffix(m, "_") { // "beet_outbox_*" in prose
				used[m] = true
			}
		}
	}
	if len(used) < 10 {
		t.Fatalf("only %d metrics used: %v", len(used), used)
	}
	for m := range used {
		if !exported(names, m) {
			t.Errorf("%s is used in deploy/ but Beet exports no such metric", m)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: rule syntax and rule tests not checked")
		return
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
