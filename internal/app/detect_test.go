package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
)

// TestPeriodBeetLive runs the whole service with a clock the test moves:
// a beet in period mode records an event and goes up; when the clock
// passes period + grace, the sweeper (its real loop) flips it down with a
// reason; the next event brings it back up.
func TestPeriodBeetLive(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		var clock atomic.Int64
		clock.Store(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()) }
		cfg := testConfig(t)
		cfg.DatabaseURL = testdb.URL(t, engine)
		cfg.SpoolPath = t.TempDir() + "/beet.spool"
		a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), Now: now})
		_, key, err := a.Backend().Service.CreateAccount(ctx, "live@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		call := func(method, path, body string) map[string]any {
			_, b := apiCall(t, a.URL(), key, method, path, body)
			var out map[string]any
			json.Unmarshal(b, &out)
			return out
		}
		b := call("POST", "/api/v1/beets", `{"name": "every minute", "detection": {"mode": "period", "period_seconds": 60, "grace_seconds": 30}}`)
		id := itoa(int64(b["id"].(float64)))
		ping := func() {
			res, err := http.Get(a.URL() + "/api/v1/beet/" + b["token"].(string))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		waitStatus := func(want string) map[string]any {
			t.Helper()
			deadline := time.Now().Add(15 * time.Second)
			for {
				got := call("GET", "/api/v1/beets/"+id, "")
				if got["status"] == want || time.Now().After(deadline) {
					return got
				}
				time.Sleep(100 * time.Millisecond)
			}
		}

		ping()
		if got := waitStatus("up"); got["status"] != "up" {
			t.Fatalf("after the first event: %v", got["status"])
		}
		clock.Add(int64(2 * time.Minute)) // past 60 s + 30 s
		got := waitStatus("down")
		if got["status"] != "down" || !strings.Contains(got["status_reason"].(string), "expected one at least every 1 min") {
			t.Fatalf("after the silence: %v %q", got["status"], got["status_reason"])
		}
		clock.Add(int64(time.Minute))
		ping()
		if got := waitStatus("up"); got["status"] != "up" || !strings.Contains(got["status_reason"].(string), "Events are back") {
			t.Fatalf("after events return: %v %q", got["status"], got["status_reason"])
		}
		flips := call("GET", "/api/v1/beets/"+id+"/flips", "")["flips"].([]any)
		if len(flips) != 3 {
			t.Fatalf("flips: %v", flips)
		}
	})
}

// TestIngestInstanceLoadsMaintenance: detection runs inside every ingestion
// commit, so an instance with ingestion and no sweeper (role ingest) loads
// the maintenance windows by itself, at start and then periodically.
func TestIngestInstanceLoadsMaintenance(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		cfg := testConfig(t)
		cfg.DatabaseURL = testdb.URL(t, engine)
		cfg.SpoolPath = t.TempDir() + "/beet.spool"
		opts := app.Options{Log: slog.New(slog.DiscardHandler)}
		if engine == "sqlite" {
			opts.NoJobs = true // role ingest needs PostgreSQL; no sweeper either way
		} else {
			cfg.Role = config.RoleIngest
		}
		a := startApp(t, cfg, opts)
		deadline := time.Now().Add(5 * time.Second)
		for a.Backend().Service.MaintenanceLoadedAt().IsZero() {
			if time.Now().After(deadline) {
				t.Fatal("the maintenance windows were never loaded on an instance without a sweeper")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestIngestInstanceSkipsDatabaseCounts: the database-wide gauges (beets
// by status, sweep and outbox lag) cost a scan of beets and are the same
// from every instance, so an ingest replica does not export them; a
// worker does.
func TestIngestInstanceSkipsDatabaseCounts(t *testing.T) {
	if os.Getenv(testdb.PostgresEnv) == "" {
		t.Skipf("%s is unset: roles need PostgreSQL", testdb.PostgresEnv)
	}
	url := testdb.URL(t, "postgres")
	for role, want := range map[string]bool{config.RoleIngest: false, config.RoleWorker: true} {
		cfg := testConfig(t)
		cfg.DatabaseURL, cfg.Role, cfg.SpoolPath = url, role, t.TempDir()+"/beet.spool"
		a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), NoJobs: true})
		res, err := http.Get(a.AdminURL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, name := range []string{"beet_beets{", "beet_sweep_lag_seconds ", "beet_outbox_lag_seconds "} {
			if got := strings.Contains(string(m), name); got != want {
				t.Errorf("role %s exports %s: %v; want %v", role, name, got, want)
			}
		}
		if !strings.Contains(string(m), "beet_db_connections{") {
			t.Errorf("role %s lacks its own pool's gauges", role)
		}
	}
}
