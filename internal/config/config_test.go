package config_test

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet/internal/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := config.Default(); c != want {
		t.Fatalf("Load with nothing set = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, c config.Config)
	}{
		{
			name: "env sets everything",
			env: map[string]string{
				"BEET_DATABASE_URL":     "postgres://u:p@db/beet",
				"BEET_LISTEN":           "127.0.0.1:9000",
				"BEET_BASE_URL":         "https://beet.example.com/",
				"BEET_LOG_LEVEL":        "DEBUG",
				"BEET_LOG_FORMAT":       "json",
				"BEET_CLEANUP_INTERVAL": "1h",
				"BEET_CLEANUP_BATCH":    "10000",
				"BEET_SHUTDOWN_TIMEOUT": "30s",
				"BEET_SHUTDOWN_DELAY":   "5s",
				"BEET_CONNECT_WAIT":     "90s",
				"BEET_REDIS_URL":        "redis://127.0.0.1:6379/2",
				"BEET_SPOOL_PATH":       "/var/lib/beet/spool",
				"BEET_INGEST_BATCH":     "500",
				"BEET_INGEST_WAIT":      "2ms",
				"BEET_INGEST_FSYNC":     "Overlap",
				"BEET_INGEST_ACK":       "Commit",
			},
			check: func(t *testing.T, c config.Config) {
				want := config.Config{
					DatabaseURL: "postgres://u:p@db/beet", Listen: "127.0.0.1:9000",
					BaseURL: "https://beet.example.com", LogLevel: slog.LevelDebug, LogFormat: "json",
					CleanupInterval: time.Hour, CleanupBatch: 10000, ShutdownTimeout: 30 * time.Second,
					ShutdownDelay: 5 * time.Second, ConnectWait: 90 * time.Second,
					RedisURL: "redis://127.0.0.1:6379/2", SpoolPath: "/var/lib/beet/spool", IngestBatch: 500, IngestWait: 2 * time.Millisecond,
					IngestFsync: config.IngestFsyncOverlap, IngestAck: config.IngestAckCommit, Role: "all", MetricsListen: config.DefaultMetricsListen, SweepInterval: 5 * time.Second, DeliveryLease: 2 * time.Minute,
				}
				if c != want {
					t.Fatalf("got %+v, want %+v", c, want)
				}
			},
		},
		{
			name: "flag overrides env",
			env:  map[string]string{"BEET_LISTEN": ":7000", "BEET_LOG_LEVEL": "error"},
			args: []string{"--listen", ":9090", "-log-level=warn"},
			check: func(t *testing.T, c config.Config) {
				if c.Listen != ":9090" || c.LogLevel != slog.LevelWarn {
					t.Fatalf("listen %q level %v; want :9090 warn", c.Listen, c.LogLevel)
				}
			},
		},
		{
			name: "base URL follows listen port",
			args: []string{"--listen", ":9090"},
			check: func(t *testing.T, c config.Config) {
				if c.BaseURL != "http://localhost:9090" {
					t.Fatalf("base URL %q", c.BaseURL)
				}
			},
		},
		{
			name: "cleanup interval 0 turns the job off",
			env:  map[string]string{"BEET_CLEANUP_INTERVAL": "0"},
			check: func(t *testing.T, c config.Config) {
				if c.CleanupInterval != 0 {
					t.Fatalf("interval %v", c.CleanupInterval)
				}
			},
		},
		{
			name: "sqlite absolute path",
			env:  map[string]string{"BEET_DATABASE_URL": "sqlite:///var/lib/beet/beet.db"},
			check: func(t *testing.T, c config.Config) {
				if c.DatabaseURL != "sqlite:///var/lib/beet/beet.db" {
					t.Fatalf("database URL %q", c.DatabaseURL)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(tc.args, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestLoadInvalid(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string // the variable named in the error
	}{
		{env: map[string]string{"BEET_DATABASE_URL": "mysql://x"}, want: "BEET_DATABASE_URL (--database-url)"},
		{env: map[string]string{"BEET_DATABASE_URL": "sqlite://"}, want: "BEET_DATABASE_URL"},
		{env: map[string]string{"BEET_LISTEN": "8080"}, want: "BEET_LISTEN (--listen)"},
		{env: map[string]string{"BEET_LISTEN": ":99999"}, want: "BEET_LISTEN"},
		{env: map[string]string{"BEET_BASE_URL": "localhost:8080"}, want: "BEET_BASE_URL (--base-url)"},
		{env: map[string]string{"BEET_BASE_URL": "ftp://x"}, want: "BEET_BASE_URL"},
		{env: map[string]string{"BEET_LOG_LEVEL": "verbose"}, want: "BEET_LOG_LEVEL (--log-level)"},
		{env: map[string]string{"BEET_LOG_FORMAT": "xml"}, want: "BEET_LOG_FORMAT (--log-format)"},
		{env: map[string]string{"BEET_CLEANUP_INTERVAL": "10"}, want: "BEET_CLEANUP_INTERVAL (--cleanup-interval)"},
		{env: map[string]string{"BEET_CLEANUP_INTERVAL": "30s"}, want: "BEET_CLEANUP_INTERVAL"},
		{env: map[string]string{"BEET_CLEANUP_INTERVAL": "-5m"}, want: "BEET_CLEANUP_INTERVAL"},
		{env: map[string]string{"BEET_CLEANUP_INTERVAL": "1000000h"}, want: "BEET_CLEANUP_INTERVAL"},
		{env: map[string]string{"BEET_LISTEN": "999.1.1.1:80"}, want: "BEET_LISTEN (--listen)"},
		{env: map[string]string{"BEET_LISTEN": "local host:80"}, want: "BEET_LISTEN"},
		{env: map[string]string{"BEET_CLEANUP_BATCH": "0"}, want: "BEET_CLEANUP_BATCH (--cleanup-batch)"},
		{env: map[string]string{"BEET_CLEANUP_BATCH": "10001"}, want: "BEET_CLEANUP_BATCH"},
		{env: map[string]string{"BEET_CLEANUP_BATCH": "lots"}, want: "BEET_CLEANUP_BATCH"},
		{env: map[string]string{"BEET_SHUTDOWN_TIMEOUT": "0"}, want: "BEET_SHUTDOWN_TIMEOUT (--shutdown-timeout)"},
		{env: map[string]string{"BEET_SHUTDOWN_DELAY": "10m"}, want: "BEET_SHUTDOWN_DELAY (--shutdown-delay)"},
		{env: map[string]string{"BEET_SHUTDOWN_DELAY": "-1s"}, want: "BEET_SHUTDOWN_DELAY"},
		{env: map[string]string{"BEET_CONNECT_WAIT": "2h"}, want: "BEET_CONNECT_WAIT (--connect-wait)"},
		{env: map[string]string{"BEET_CONNECT_WAIT": "soon"}, want: "BEET_CONNECT_WAIT"},
		{args: []string{"--cleanup-batch", "0"}, want: "BEET_CLEANUP_BATCH (--cleanup-batch)"},
		{env: map[string]string{"BEET_REDIS_URL": "127.0.0.1:6379"}, want: "BEET_REDIS_URL (--redis-url)"},
		{env: map[string]string{"BEET_INGEST_BATCH": "0"}, want: "BEET_INGEST_BATCH (--ingest-batch)"},
		{env: map[string]string{"BEET_INGEST_BATCH": "many"}, want: "BEET_INGEST_BATCH"},
		{env: map[string]string{"BEET_INGEST_WAIT": "1s"}, want: "BEET_INGEST_WAIT (--ingest-wait)"},
		{env: map[string]string{"BEET_INGEST_FSYNC": "never"}, want: "BEET_INGEST_FSYNC (--ingest-fsync)"},
		{env: map[string]string{"BEET_INGEST_ACK": "spool"}, want: "BEET_INGEST_ACK (--ingest-ack)"},
		{env: map[string]string{"BEET_INGEST_ACK": "journal", "BEET_INGEST_LANES": "4"}, want: "BEET_INGEST_ACK (--ingest-ack)"},
		{env: map[string]string{"BEET_INGEST_ACK": "journal", "BEET_INGEST_FSYNC": "overlap"}, want: "BEET_INGEST_ACK"},
		{env: map[string]string{"BEET_DEBUG_LISTEN": ":6060"}, want: "BEET_DEBUG_LISTEN (--debug-listen)"},
		{env: map[string]string{"BEET_DEBUG_LISTEN": "0.0.0.0:6060"}, want: "BEET_DEBUG_LISTEN"},
		{env: map[string]string{"BEET_DEBUG_LISTEN": "127.0.0.1"}, want: "BEET_DEBUG_LISTEN"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := config.Load(tc.args, env(tc.env))
			if err == nil {
				t.Fatal("no error")
			}
			var errs config.Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("want exactly one setting error, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

func TestLoadReportsEveryBadSettingOnce(t *testing.T) {
	_, err := config.Load(nil, env(map[string]string{
		"BEET_LOG_LEVEL":        "loud",
		"BEET_CLEANUP_INTERVAL": "soon",
		"BEET_CLEANUP_BATCH":    "0",
	}))
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v", err)
	}
	if len(errs) != 3 {
		t.Fatalf("want 3 errors, got %d: %v", len(errs), err)
	}
	var se *config.SettingError
	if !errors.As(err, &se) || se.Env != "BEET_LOG_LEVEL" {
		t.Fatalf("errors.As SettingError: %v", se)
	}
}

func TestDatabaseURLNeverEchoed(t *testing.T) {
	_, err := config.Load(nil, env(map[string]string{"BEET_DATABASE_URL": "mysql://root:hunter2@db/x"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v: want an error without the password", err)
	}
}

func TestBindSharesFlagSet(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	email := fs.String("email", "", "")
	f := config.Bind(fs, env(map[string]string{"BEET_LISTEN": ":1"}))
	if err := fs.Parse([]string{"--email", "a@b.c", "--log-format", "json"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if *email != "a@b.c" || c.LogFormat != "json" || c.Listen != ":1" {
		t.Fatalf("email %q, config %+v", *email, c)
	}
}

func TestValidate(t *testing.T) {
	c := config.Default()
	c.CleanupBatch = 0
	c.ShutdownTimeout = 0
	err := c.Validate()
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("Validate = %v, want two errors", err)
	}
}

// TestEmptyDatabaseURL: set but empty, BEET_DATABASE_URL is refused
// rather than meaning the default file; a flag that gives it wins.
func TestEmptyDatabaseURL(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		args    []string
		refused bool
	}{
		{[]string{"BEET_DATABASE_URL="}, nil, true},
		{[]string{"BEET_DATABASE_URL=  "}, nil, true},
		{[]string{"BEET_DATABASE_URL="}, []string{"--database-url", "sqlite://x.db"}, false},
		{[]string{"BEET_LOG_LEVEL="}, nil, false},
		{nil, nil, false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := config.Bind(fs, func(string) string { return "" })
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := f.EmptyVariables(tc.environ)
		if got := err != nil && strings.Contains(err.Error(), "BEET_DATABASE_URL (--database-url): is set but empty"); got != tc.refused {
			t.Errorf("%v %v: %v, want refused %v", tc.environ, tc.args, err, tc.refused)
		}
	}
}
