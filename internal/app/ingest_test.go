package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/testdb"
)

// TestIngestEndToEnd runs the whole service on each engine: a beet made
// through the API records a beacon, a JSON POST and a sendBeacon, lists
// them through the API, and the metrics count them. A rotated token stops
// recording at once. It runs in both ack modes: with the journal, the
// reads right after the pings find them too (read-your-writes).
func TestIngestEndToEnd(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		for _, ack := range []string{config.IngestAckCommit, config.IngestAckJournal} {
			t.Run(ack, func(t *testing.T) { ingestEndToEnd(t, engine, ack) })
		}
	})
}

func ingestEndToEnd(t *testing.T, engine, ack string) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.DatabaseURL = testdb.URL(t, engine)
	cfg.IngestAck = ack
	cfg.SpoolPath = t.TempDir() + "/beet.spool"
	if u := os.Getenv("BEET_TEST_REDIS_URL"); u != "" {
		cfg.RedisURL = u
	}
	a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler)})
	_, key, err := a.Backend().Service.CreateAccount(ctx, "e2e@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, []byte) { return apiCall(t, a.URL(), key, method, path, body) }
	status, body := call("POST", "/api/v1/beets", `{"name": "Checkout succeeded"}`)
	var b struct {
		ID    int64
		Token string
	}
	json.Unmarshal(body, &b)
	if status != 201 || b.Token == "" {
		t.Fatalf("create beet: %d %s", status, body)
	}
	ingestURL := a.URL() + "/api/v1/beet/" + b.Token
	beacon := func(method, contentType, body string) int {
		req, _ := http.NewRequest(method, ingestURL, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if ct := res.Header.Get("Content-Type"); ct != "image/gif" {
			t.Errorf("%s ingest: Content-Type %q", method, ct)
		}
		return res.StatusCode
	}
	for _, s := range []int{
		beacon("GET", "", ""),
		beacon("POST", "application/json", `{"value": 5}`),
		beacon("POST", "text/plain;charset=UTF-8", `{"value": 7.25}`),
	} {
		if s != 200 {
			t.Fatalf("ingest answered %d", s)
		}
	}
	status, body = call("GET", "/api/v1/beets/"+itoa(b.ID)+"/events", "")
	var evs struct {
		Events []struct {
			Value  *float64
			Method string
		}
	}
	json.Unmarshal(body, &evs)
	if status != 200 || len(evs.Events) != 3 || evs.Events[0].Value == nil || *evs.Events[0].Value != 7.25 || evs.Events[2].Method != "GET" {
		t.Fatalf("events: %d %s", status, body)
	}

	status, body = call("POST", "/api/v1/beets/"+itoa(b.ID)+"/rotate-token", "")
	if status != 200 {
		t.Fatalf("rotate: %d %s", status, body)
	}
	if s := beacon("GET", "", ""); s != 200 {
		t.Fatalf("old token answered %d, want the 200 GIF", s)
	}
	if _, body = call("GET", "/api/v1/beets/"+itoa(b.ID)+"/events", ""); strings.Count(string(body), `"received_at"`) != 3 {
		t.Fatalf("the rotated token still records: %s", body)
	}

	res, err := http.Get(a.AdminURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// 3 recorded, plus the old token's request: the writer committed its
	// group, and the store dropped the event inside it (token rotated).
	if !strings.Contains(string(metrics), "beet_ingest_events_committed_total 4") {
		t.Fatalf("metrics do not count 4 committed events:\n%s", grep(string(metrics), "beet_"))
	}
	if strings.Contains(string(metrics), b.Token) {
		t.Fatal("metrics hold a token")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// apiCall makes one management API call with key and returns the status
// and body.
func apiCall(t *testing.T, base, key, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// startApp starts the app on cfg and stops it when the test ends.
func startApp(t *testing.T, cfg config.Config, opts app.Options) *app.App {
	t.Helper()
	ctx := context.Background()
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(ctx) })
	return a
}
