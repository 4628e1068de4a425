package app_test

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// TestStartWaitsForPostgres starts an ingest instance while PostgreSQL is
// unreachable (a proxy on loopback that refuses, then forwards): it waits
// for the database within its connect window instead of failing at once,
// and gives up, saying so, when the database does not come in time.
func TestStartWaitsForPostgres(t *testing.T) {
	if os.Getenv(testdb.PostgresEnv) == "" {
		t.Skipf("%s is unset", testdb.PostgresEnv)
	}
	ctx := context.Background()
	direct := testdb.URL(t, "postgres")
	u, _ := url.Parse(direct)
	proxy := testdb.NewProxy(t, u.Host)
	proxy.Cut()
	cfg := testConfig(t)
	cfg.DatabaseURL = proxy.Rewrite(direct)
	cfg.Role = "ingest"
	cfg.SpoolPath = filepath.Join(t.TempDir(), "ingest.spool")

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
