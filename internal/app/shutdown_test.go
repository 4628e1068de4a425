package app_test

import (
	"context"
	"fmt"
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
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// TestStopDuringOutageKeepsReplaying stops an ingest instance whose spool
// holds acknowledged pings while PostgreSQL is unreachable (a proxy, cut).
// The writer retries the replay until the shutdown deadline: if the
// database comes back meanwhile, the spool is emptied into it; if not, an
// ERROR line names how many events the spool still holds, and where.
func TestStopDuringOutageKeepsReplaying(t *testing.T) {
	if os.Getenv(testdb.PostgresEnv) == "" {
		t.Skipf("%s is unset", testdb.PostgresEnv)
	}
	for _, comesBack := range []bool{false, true} {
		t.Run(fmt.Sprintf("back=%v", comesBack), func(t *testing.T) {
			ctx := context.Background()
			direct := testdb.URL(t, "postgres")
			u, _ := url.Parse(direct)
			proxy := testdb.NewProxy(t, u.Host)
			cfg := testConfig(t)
			cfg.DatabaseURL = proxy.Rewrite(direct)
			cfg.SpoolPath = filepath.Join(t.TempDir(), "ingest.spool")
			logs := &testlog.Buffer{}
			a, err := app.New(ctx, cfg, app.Options{Log: slog.New(slog.NewTextHandler(logs, nil)), NoJobs: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Stop(ctx)
			if err := a.Start(ctx); err != nil {
				t.Fatal(err)
			}
			acc, _, err := a.Backend().Service.CreateAccount(ctx, "stop@example.com", "password1", beet.PlanFree)
			if err != nil {
				t.Fatal(err)
			}
			b, err := a.Backend().Service.CreateBeet(ctx, acc.ID, service.BeetInput{Name: "spooled"})
			if err != nil {
				t.Fatal(err)
			}
			proxy.Cut()
			// Without keep-alives the client dials no spare connection:
			// one left unused holds the HTTP shutdown up to 5 s (net/http
			// waits for a new connection's first request that long), and
			// this test times the writer's part of the stop.
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			for range 3 {
				res, err := client.Get(a.URL() + "/api/v1/beet/" + b.Token)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Fatalf("ping during the outage: %d", res.StatusCode)
				}
			}
			if comesBack {
				time.AfterFunc(500*time.Millisecond, proxy.Restore)
			}
			const deadline = 2 * time.Second
			stopCtx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			if err := a.Stop(stopCtx); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			took := time.Since(start)
			want := fmt.Sprintf("spool still holds 3 events at %s", cfg.SpoolPath)
			verify := testdb.Open(t, direct)
			events, err := verify.CountEventsBefore(ctx, b.ID, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if comesBack {
				if strings.Contains(logs.String(), "spool still holds") || events != 3 {
					t.Fatalf("database back during the stop: %d of 3 events stored; logs:\n%s", events, logs.String())
				}
				return
			}
			if took < deadline-200*time.Millisecond {
				t.Errorf("Stop returned after %v: the replay was not retried until the deadline (%v)", took, deadline)
			}
			line := grep(logs.String(), want)
			if !strings.Contains(line, "level=ERROR") {
				t.Fatalf("no ERROR line %q; logs:\n%s", want, logs.String())
			}
			if events != 0 {
				t.Fatalf("%d events stored during the outage", events)
			}
		})
	}
}
