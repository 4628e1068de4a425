package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
)

// testConfig is a config for one test: a fresh SQLite file, a free port on
// loopback, and the retention job off unless the test turns it on.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "beet.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.CleanupInterval = 0
	cfg.ShutdownTimeout = 5 * time.Second
	cfg.MetricsListen = "127.0.0.1:0"
	return cfg
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("GET %s: %v in %q", url, err, b)
	}
	return resp.StatusCode, body
}

func TestAppStartStop(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.CleanupInterval = time.Minute // the job starts and must stop with the app
	a, err := app.New(ctx, cfg, app.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready"} {
		status, body := getJSON(t, a.URL()+path)
		if status != http.StatusOK || body["status"] != want {
			t.Errorf("GET %s = %d %v, want 200 %s", path, status, body, want)
		}
	}
	// The API is mounted: without a key it answers 401, not 404.
	resp, err := http.Get(a.URL() + "/api/v1/beets")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/beets without a key = %d, want 401", resp.StatusCode)
	}
	// ... and with a key of an account made through the embedded backend, 200.
	_, key, err := a.Backend().Service.CreateAccount(ctx, "ada@example.com", "correct horse battery staple", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", a.URL()+"/api/v1/beets", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/v1/beets with a key = %d, want 200", resp.StatusCode)
	}

	if err := a.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := http.Get(a.URL() + "/healthz"); err == nil {
		t.Fatal("server still answers after Stop")
	}
}

func TestRunShutsDownWhenContextEnds(t *testing.T) {
	cfg := testConfig(t)
	cfg.CleanupInterval = time.Minute
	url, cancel, done := runApp(t, cfg)
	if status, _ := getJSON(t, url+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz = %d", status)
	}
	cancel() // what SIGTERM does through signal.NotifyContext in cmd/beet
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Fatal("server still answers after Run returned")
	}
}

// TestShutdownDelay: with BEET_SHUTDOWN_DELAY, SIGTERM first turns
// /readyz to 503 "shutting down" while the instance still serves (a ping
// sent meanwhile is answered), so load balancers stop sending before the
// listener closes; then it shuts down.
func TestShutdownDelay(t *testing.T) {
	cfg := testConfig(t)
	cfg.ShutdownDelay = 1500 * time.Millisecond
	url, cancel, done := runApp(t, cfg)
	cancel()
	time.Sleep(200 * time.Millisecond)
	if status, body := getJSON(t, url+"/readyz"); status != http.StatusServiceUnavailable || body["reason"] != "shutting down" {
		t.Errorf("readyz during the delay = %d %v; want 503 shutting down", status, body)
	}
	res, err := http.Get(url + "/api/v1/beet/bt_notatokenatall")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("a ping during the delay: %v, %v; want it answered", res, err)
	} else {
		res.Body.Close()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the delay")
	}
}

// runApp starts app.Run with cfg and returns its URL, a cancel that does
// what SIGTERM does through signal.NotifyContext in cmd/beet, and Run's
// result.
func runApp(t *testing.T, cfg config.Config) (url string, cancel func(), done <-chan error) {
	t.Helper()
	logs := &lineLog{lines: make(chan map[string]any, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	result := make(chan error, 1)
	go func() { result <- app.Run(ctx, cfg, app.Options{Log: slog.New(slog.NewJSONHandler(logs, nil))}) }()
	// Run owns the app; its "listening" log line says where it is.
	for url == "" {
		select {
		case line := <-logs.lines:
			if line["msg"] == "listening" {
				url, _ = line["url"].(string)
			}
		case err := <-result:
			t.Fatalf("Run returned early: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no listening line in 10s")
		}
	}
	return url, cancel, result
}

// lineLog passes each JSON log line to a channel.
type lineLog struct{ lines chan map[string]any }

func (l *lineLog) Write(p []byte) (int, error) {
	var m map[string]any
	if json.Unmarshal(p, &m) == nil {
		select {
		case l.lines <- m:
		default:
		}
	}
	return len(p), nil
}

func TestStartFailsOnTakenPort(t *testing.T) {
	ctx := context.Background()
	first, err := app.New(ctx, testConfig(t), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(ctx)
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.Listen = first.URL()[len("http://"):]
	second, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(ctx); err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
	if err := second.Stop(ctx); err != nil {
		t.Fatalf("Stop after failed Start: %v", err)
	}
}
