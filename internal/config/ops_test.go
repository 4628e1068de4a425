package config_test

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet/internal/config"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSettingsFile(t *testing.T) {
	toml := writeFile(t, "beet.toml", `# production
database_url = "postgres://beet:s3cret@db/beet"   # the main store
BEET_ROLE = 'worker'
sweep-interval = 2s
listen = ":7000"
`)
	yaml := writeFile(t, "beet.yaml", "---\ndatabase_url: postgres://beet@db/beet\nrole: ingest\nmetrics_listen: off # no admin port\n")
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		check func(c config.Config) bool
	}{
		{"toml by flag", []string{"--config", toml}, nil, func(c config.Config) bool {
			return c.DatabaseURL == "postgres://beet:s3cret@db/beet" && c.Role == "worker" && c.SweepInterval == 2*time.Second && c.Listen == ":7000"
		}},
		{"yaml by variable", nil, map[string]string{"BEET_CONFIG": yaml}, func(c config.Config) bool {
			return c.DatabaseURL == "postgres://beet@db/beet" && c.Role == "ingest" && c.MetricsListen == "off"
		}},
		{"env beats file, flag beats env", []string{"--config", toml, "--listen", ":7002"}, map[string]string{"BEET_ROLE": "all", "BEET_LISTEN": ":7001"},
			func(c config.Config) bool {
				return c.Role == "all" && c.Listen == ":7002" && c.SweepInterval == 2*time.Second
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(tc.args, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Fatalf("got %+v", c)
			}
		})
	}
}

func TestSettingsFileRefusals(t *testing.T) {
	for text, want := range map[string]string{
		"listn = \":1\"\n":              `"listn" is not a setting; did you mean BEET_LISTEN?`,
		"colour = \"red\"\n":            `"colour" is not a setting`,
		"[server]\nlisten = \":1\"\n":   "line 1: tables are not supported",
		"listen = \":1\nrole = all\n":   "line 1 (BEET_LISTEN): unterminated string",
		"role = all\nROLE = ingest\n":   "line 2: BEET_ROLE is set twice",
		"role = all\njust words\n":      "line 2: want KEY = value",
		"listen = [\":1\", \":2\"]\n":   "arrays and tables are not supported",
		"role = \"all\" extra\n":        `unexpected "extra" after the value`,
		"config = \"other.toml\"\n":     "a settings file cannot name another",
		"sweep_interval = \"1h\"\n":     "BEET_SWEEP_INTERVAL (--sweep-interval)",
		"metrics_token = \"short\"\n":   "BEET_METRICS_TOKEN (--metrics-token): must be at least 16",
		"shutdown_timeout = 1000000h\n": "BEET_SHUTDOWN_TIMEOUT (--shutdown-timeout) = \"1000000h\": must be greater than 0 and at most 1h0m0s",
		"role = \"ingest\"\n":           `BEET_ROLE (--role) = "ingest": ingest and worker need PostgreSQL`,
		"role = \"worker\"\n":           `BEET_ROLE (--role) = "worker": ingest and worker need PostgreSQL`,
	} {
		path := writeFile(t, "beet.toml", text)
		_, err := config.Load([]string{"--config", path}, env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("file %q: error %v, want %q", text, err, want)
		}
	}
	if _, err := config.Load([]string{"--config", "/nonexistent/beet.toml"}, env(nil)); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestUnknownVariables(t *testing.T) {
	got := config.UnknownVariables([]string{
		"BEET_LISTN=:8080", "BEET_LISTEN=:1", "BEET_TEST_POSTGRES_URL=x", "PATH=/bin",
		"BEET_DATABASE=postgres://x", "BEET_COLOUR=red", "BEET_CONFIG=/etc/beet.toml",
	})
	var lines []string
	for _, u := range got {
		lines = append(lines, u.String())
	}
	want := []string{
		"BEET_COLOUR is not a Beet setting; it is ignored",
		"BEET_DATABASE is not a Beet setting (did you mean BEET_DATABASE_URL?); it is ignored",
		"BEET_LISTN is not a Beet setting (did you mean BEET_LISTEN?); it is ignored",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestEffectiveMasksSecrets(t *testing.T) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := config.Bind(fs, env(map[string]string{
		"BEET_DATABASE_URL":   "postgres://beet:hunter2@db/beet?sslmode=disable",
		"BEET_REDIS_URL":      "redis://:redispass@cache:6379/0",
		"BEET_METRICS_TOKEN":  "0123456789abcdef-secret",
		"BEET_SWEEP_INTERVAL": "1h",
	}))
	if err := fs.Parse([]string{"--listen", ":9999"}); err != nil {
		t.Fatal(err)
	}
	eff, err := f.Effective()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]config.Effective{}
	var all strings.Builder
	for _, e := range eff {
		byName[e.Env] = e
		all.WriteString(e.Value + "\n")
	}
	for _, secret := range []string{"hunter2", "redispass", "0123456789abcdef"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("effective settings show %q", secret)
		}
	}
	for name, want := range map[string]string{
		"BEET_DATABASE_URL":  "postgres://beet:xxxxx@db/beet?sslmode=disable",
		"BEET_METRICS_TOKEN": "(set, hidden)",
		"BEET_LISTEN":        ":9999",
		"BEET_BASE_URL":      "http://localhost:9999",
	} {
		if byName[name].Value != want {
			t.Errorf("%s = %q, want %q", name, byName[name].Value, want)
		}
	}
	if byName["BEET_LISTEN"].Source != config.FromFlag || byName["BEET_ROLE"].Source != config.FromDefault || byName["BEET_REDIS_URL"].Source != config.FromEnv {
		t.Errorf("sources: %+v", eff)
	}
	if byName["BEET_SWEEP_INTERVAL"].Err == nil || byName["BEET_LISTEN"].Err != nil {
		t.Errorf("errors: sweep %v, listen %v", byName["BEET_SWEEP_INTERVAL"].Err, byName["BEET_LISTEN"].Err)
	}
}
