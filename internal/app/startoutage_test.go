package app_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// outageConfig is a config on a fresh PostgreSQL database reached through
// a proxy the test can cut, and the database's own URL.
func outageConfig(t *testing.T, role string) (config.Config, *testdb.Proxy, string) {
	t.Helper()
	if os.Getenv(testdb.PostgresEnv) == "" {
		t.Skipf("%s is unset", testdb.PostgresEnv)
	}
	direct := testdb.URL(t, "postgres")
	u, _ := url.Parse(direct)
	proxy := testdb.NewProxy(t, u.Host)
	cfg := testConfig(t)
	cfg.DatabaseURL = proxy.Rewrite(direct)
	cfg.Role = role
	cfg.SpoolPath = filepath.Join(t.TempDir(), "ingest.spool")
	return cfg, proxy, direct
}

// TestStartWaitsForPostgres starts a worker instance while PostgreSQL is
// unreachable (a proxy on loopback that refuses, then forwards): it waits
// for the database within its connect window instead of failing at once,
// and gives up, saying so, when the database does not come in time. (An
// ingest instance starts degraded instead: TestIngestStartsDegraded.)
func TestStartWaitsForPostgres(t *testing.T) {
	ctx := context.Background()
	cfg, proxy, _ := outageConfig(t, config.RoleWorker)
	proxy.Cut()

	t.Run("comes back", func(t *testing.T) {
		time.AfterFunc(1500*time.Millisecond, proxy.Restore)
		defer proxy.Cut()
		logs := &testlog.Buffer{}
		start := time.Now()
		cfg := cfg
		cfg.ConnectWait = 30 * time.Second
		a, err := app.New(ctx, cfg, app.Options{Log: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatalf("New while the database comes back after 1.5 s: %v", err)
		}
		defer a.Stop(ctx)
		if took := time.Since(start); took < time.Second {
			t.Errorf("New took %v, before the database was back", took)
		}
		if !strings.Contains(logs.String(), "database unreachable at start; retrying") {
			t.Errorf("no retry logged:\n%s", logs.String())
		}
	})
	t.Run("never comes", func(t *testing.T) {
		start := time.Now()
		cfg := cfg
		cfg.ConnectWait = 2 * time.Second
		_, err := app.New(ctx, cfg, app.Options{})
		if err == nil || !strings.Contains(err.Error(), "gave up after") {
			t.Fatalf("New with the database away: %v, want it to give up after retrying", err)
		}
		if took := time.Since(start); took < time.Second || took > 10*time.Second {
			t.Errorf("New gave up after %v, want about the 2 s window", took)
		}
	})
}

// TestIngestStartsDegraded starts an ingest instance while PostgreSQL is
// unreachable: it serves at once, answers pings with the GIF and keeps
// them in its spool, stays ready ("degraded") while the API answers 503,
// and says so in its log and in beet_ingest_spooling. Once the database
// is back the pings reach it, and the instance serves as usual.
func TestIngestStartsDegraded(t *testing.T) {
	ctx := context.Background()
	cfg, proxy, direct := outageConfig(t, config.RoleIngest)
	cfg.ConnectWait = 2 * time.Second // what a start that waits would give up after

	seed := testConfig(t)
	seed.DatabaseURL = direct
	b0, err := app.OpenBackend(ctx, seed, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc, _, err := b0.Service.CreateAccount(ctx, "degraded@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := b0.Service.CreateBeet(ctx, acc.ID, service.BeetInput{Name: "pinged during the outage"})
	if err != nil {
		t.Fatal(err)
	}
	b0.Close()

	proxy.Cut()
	logs := &testlog.Buffer{}
	a, err := app.New(ctx, cfg, app.Options{Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New with the database away: %v", err)
	}
	defer a.Stop(ctx)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if line := grep(logs.String(), "started degraded"); !strings.Contains(line, "level=WARN") {
		t.Errorf("no WARN line saying the start is degraded; logs:\n%s", logs.String())
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "degraded"} {
		if status, body := getJSON(t, a.URL()+path); status != http.StatusOK || body["status"] != want {
			t.Errorf("GET %s while degraded = %d %v, want 200 %s", path, status, body, want)
		}
	}
	if _, scrape := get(t, a.AdminURL()+"/metrics", ""); series(scrape, "beet_ingest_spooling") != 1 {
		t.Errorf("beet_ingest_spooling = %v while degraded, want 1", series(scrape, "beet_ingest_spooling"))
	}
	if status, _ := get(t, a.URL()+"/api/v1/beets", ""); status != http.StatusServiceUnavailable {
		t.Errorf("GET /api/v1/beets while degraded = %d, want 503", status)
	}
	const pings = 5
	for i := range pings {
		path := "/api/v1/beet/"
		if i%2 == 1 {
			path = "/ping/"
		}
		res, err := http.Get(a.URL() + path + b.Token)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/gif" {
			t.Fatalf("ping %d while degraded: %d %s", i, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}

	proxy.Restore()
	verify := testdb.Open(t, direct)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := verify.CountEventsBefore(ctx, b.ID, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if n == pings {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pings in the database 30 s after it came back; logs:\n%s", n, pings, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, body := getJSON(t, a.URL()+"/readyz"); status != http.StatusOK || body["status"] != "ready" {
		t.Errorf("GET /readyz once the database is back = %d %v, want 200 ready", status, body)
	}
	if status, _ := get(t, a.URL()+"/api/v1/beets", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/beets without a key once the database is back = %d, want 401", status)
	}
}

// TestDegradedStartRefusesWhatAStartRefuses starts an ingest instance
// degraded, then gives it back a database that a normal start refuses (a
// migration missing below the current version): the instance stops with
// the error a normal start gives, rather than write into it.
func TestDegradedStartRefusesWhatAStartRefuses(t *testing.T) {
	ctx := context.Background()
	cfg, proxy, direct := outageConfig(t, config.RoleIngest)
	cfg.ShutdownTimeout = time.Second
	cfg.ConnectWait = 2 * time.Second // what a start that waits would give up after
	testdb.Open(t, direct).Close()
	db, err := sql.Open("pgx", direct)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = 2`); err != nil {
		t.Fatal(err)
	}
	seed := testConfig(t)
	seed.DatabaseURL = direct
	_, refused := app.OpenBackend(ctx, seed, app.Options{})
	if refused == nil {
		t.Fatal("a normal start took a database with a migration missing")
	}

	proxy.Cut()
	_, _, done := runApp(t, cfg) // returns once the degraded instance listens
	proxy.Restore()
	select {
	case err := <-done:
		if err == nil || err.Error() != refused.Error() {
			t.Fatalf("Run returned %v, want the normal start's error %q", err, refused)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the degraded instance still runs 30 s after the database came back unusable")
	}
}
