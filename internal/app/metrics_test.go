package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// get fetches url with an optional bearer token.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// series returns the value of one series in a scrape, or -1 if absent.
func series(scrape, name string) float64 {
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestMetricsMove scrapes an ingest-only instance's two listeners while
// acting on it: /metrics is on the admin listener, and on the public one
// only with the token; the ingestion outcomes, request latencies, commit
// sizes, beets by status, due queue, sweep lag and outbox backlog each
// move when the thing they count happens.
func TestMetricsMove(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		var clock atomic.Int64
		clock.Store(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()) }
		advance := func(d time.Duration) { clock.Add(int64(d)) }
		const token = "metrics-token-0123456789"
		cfg := testConfig(t)
		cfg.DatabaseURL = testdb.URL(t, engine)
		cfg.SpoolPath = t.TempDir() + "/beet.spool"
		cfg.MetricsToken = token
		cfg.AllowPrivateTargets = true
		// No sweeper, no outbox worker: the queues stay as the test leaves them.
		a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), Now: now, NoJobs: true})
		_, key, err := a.Backend().Service.CreateAccount(ctx, "metrics@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}

		// Where /metrics answers.
		if status, body := get(t, a.AdminURL()+"/metrics", ""); status != 200 || !strings.Contains(body, `beet_build_info{`) {
			t.Fatalf("admin /metrics = %d", status)
		}
		for _, tok := range []string{"", "wrong-token-0123456789"} {
			if status, body := get(t, a.URL()+"/metrics", tok); status != http.StatusUnauthorized || strings.Contains(body, "beet_") {
				t.Fatalf("public /metrics with token %q = %d %.80q, want 401", tok, status, body)
			}
		}
		scrape := func() string {
			t.Helper()
			status, body := get(t, a.URL()+"/metrics", token)
			if status != 200 {
				t.Fatalf("public /metrics with the token = %d", status)
			}
			return body
		}

		if status, _ := apiCall(t, a.URL(), key, "POST", "/api/v1/channels", `{"kind": "webhook", "name": "hook", "config": {"url": "http://127.0.0.1:9/hook"}}`); status != 201 {
			t.Fatalf("create channel: %d", status)
		}
		_, body := apiCall(t, a.URL(), key, "POST", "/api/v1/beets", `{"name": "metered", "detection": {"mode": "period", "period_seconds": 60, "grace_seconds": 0}}`)
		tok := between(string(body), `"token":"`, `"`)
		if !beet.ValidTokenShape(tok) {
			t.Fatalf("create beet: %s", body)
		}
		advance(11 * time.Second) // the first scrape cached the counts of an empty database
		before := scrape()
		if series(before, `beet_beets{status="new"}`) != 1 {
			t.Fatalf("beet_beets before any event:\n%s", grep(before, "beet_beets"))
		}

		ingest := func(method, path, ua, body string) int {
			req, _ := http.NewRequest(method, a.URL()+"/api/v1/beet/"+path, strings.NewReader(body))
			if ua != "" {
				req.Header.Set("User-Agent", ua)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		ingest("GET", tok, "", "")
		ingest("POST", tok, "", `{"value": "twelve"}`)
		ingest("GET", "not-a-token", "", "")
		ingest("GET", beet.NewToken(), "", "")
		ingest("GET", tok, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "")
		limited := 0
		for range 60 {
			if ingest("GET", tok, "", "") == http.StatusTooManyRequests {
				limited++
			}
		}
		advance(11 * time.Second) // past the cache of the database counts
		after := scrape()
		for name, want := range map[string]float64{
			`beet_ingest_requests_total{outcome="recorded"}`:                             60 - float64(limited) + 1,
			`beet_ingest_requests_total{outcome="bad_body"}`:                             1,
			`beet_ingest_requests_total{outcome="malformed_token"}`:                      1,
			`beet_ingest_requests_total{outcome="unknown_token"}`:                        1,
			`beet_ingest_requests_total{outcome="bot"}`:                                  1,
			`beet_ingest_requests_total{outcome="limited"}`:                              float64(limited),
			`beet_http_request_duration_seconds_count{code="4xx",route="/api/v1/beet/"}`: float64(limited),
			`beet_beets{status="up"}`:                                                    1,
			`beet_due_beets`:                                                             0,
			`beet_outbox_pending`:                                                        0,
			`beet_ingest_spool_bytes`:                                                    0,
		} {
			if got := series(after, name); got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		// Statuses no beet has read 0, rather than vanish.
		for _, st := range beet.Statuses {
			if st != beet.StatusUp && !strings.Contains(after, `beet_beets{status="`+string(st)+`"} 0`+"\n") {
				t.Errorf("no beet_beets{status=%q} 0 in the scrape", st)
			}
		}
		if limited != 3 { // 63 requests for the token (the bot's too), 60 fit in the window
			t.Errorf("%d pings limited, want 3", limited)
		}
		if got := series(after, `beet_http_request_duration_seconds_count{code="2xx",route="/api/v1/beet/"}`); got != 5+60-float64(limited) {
			t.Errorf("2xx ingestion requests = %v, want %v", got, 5+60-limited)
		}
		if series(after, `beet_http_request_duration_seconds_count{code="2xx",route="POST /api/v1/beets"}`) != 1 {
			t.Errorf("API route not measured:\n%s", grep(after, "duration_seconds_count"))
		}
		if n := series(after, `beet_ingest_batch_events_count`); n < 1 || series(after, `beet_ingest_batch_events_sum`) != 62-float64(limited) {
			t.Errorf("commit groups %v holding %v events, want >= 1 holding %d", n, series(after, `beet_ingest_batch_events_sum`), 62-limited)
		}
		if series(after, `beet_ingest_commit_seconds_count{result="ok"}`) < 1 {
			t.Errorf("no commit latency:\n%s", grep(after, "commit_seconds"))
		}
		if !strings.Contains(after, `beet_db_connections{pool=`) || !strings.Contains(after, `beet_db_max_open_connections{pool=`) {
			t.Errorf("no pool metrics:\n%s", grep(after, "beet_db"))
		}

		// The deadline passes: this instance runs no sweeper, so the beet
		// waits in the due queue and the lag grows.
		advance(2 * time.Minute)
		late := scrape()
		if series(late, "beet_due_beets") != 1 || series(late, "beet_sweep_lag_seconds") < 60 {
			t.Errorf("due %v, lag %v; want 1 beet due for over 60 s", series(late, "beet_due_beets"), series(late, "beet_sweep_lag_seconds"))
		}
		// A sweep flips it down; its alert waits in the outbox (no worker).
		if n, _, err := a.Backend().Service.Sweep(ctx, now(), now(), 100); n != 1 || err != nil {
			t.Fatalf("sweep flipped %d, %v", n, err)
		}
		advance(11 * time.Second)
		swept := scrape()
		for name, want := range map[string]float64{
			`beet_beets{status="down"}`: 1, `beet_beets{status="up"}`: 0, `beet_due_beets`: 0, `beet_outbox_pending`: 1,
		} {
			if got := series(swept, name); got != want {
				t.Errorf("after the sweep: %s = %v, want %v", name, got, want)
			}
		}
		if series(swept, "beet_outbox_lag_seconds") < 11 {
			t.Errorf("outbox lag %v, want the alert's age", series(swept, "beet_outbox_lag_seconds"))
		}
		if strings.Contains(swept, tok) || strings.Contains(swept, tok[:12]) {
			t.Error("metrics hold a token")
		}
	})
}

// TestMetricsNotPublicWithoutToken: with no BEET_METRICS_TOKEN the public
// listener has no /metrics at all.
func TestMetricsNotPublicWithoutToken(t *testing.T) {
	a := startApp(t, testConfig(t), app.Options{})
	if status, body := get(t, a.URL()+"/metrics", ""); status == 200 || strings.Contains(body, "beet_") {
		t.Fatalf("public /metrics = %d %.100q", status, body)
	}
	if status, _ := get(t, a.AdminURL()+"/metrics", ""); status != 200 {
		t.Fatalf("admin /metrics = %d", status)
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// The events partitions' state is scraped on PostgreSQL: the partition
// job (any instance running jobs) keeps three months made ahead. SQLite
// has no partitions and no such series.
func TestMetricsEventPartitions(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		cfg := testConfig(t)
		cfg.DatabaseURL = testdb.URL(t, engine)
		cfg.SpoolPath = t.TempDir() + "/beet.spool"
		a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler)})
		status, body := get(t, a.AdminURL()+"/metrics", "")
		if status != 200 {
			t.Fatalf("admin /metrics = %d", status)
		}
		if engine == "sqlite" {
			if strings.Contains(body, "beet_events_partitions") {
				t.Errorf("SQLite reports partitions:\n%s", grep(body, "beet_events_"))
			}
			return
		}
		ahead := series(body, "beet_events_partitions_ahead_seconds")
		if ahead < 89*24*3600 || series(body, "beet_events_partitions") < 4 || series(body, "beet_events_default_partition_rows") != 0 {
			t.Errorf("partitions not made 3 months ahead:\n%s", grep(body, "beet_events_"))
		}
	})
}

// TestMetricsSeriesFromTheStart: the series the alerts take increase() of
// exist at 0 before anything happens, so the first failure after a
// restart moves them from 0 to 1 instead of appearing at 1 (which
// increase() reads as no change).
func TestMetricsSeriesFromTheStart(t *testing.T) {
	a := startApp(t, testConfig(t), app.Options{Log: slog.New(slog.DiscardHandler), NoJobs: true})
	_, body := get(t, a.AdminURL()+"/metrics", "")
	want := []string{`beet_ingest_requests_total{outcome="not_recorded"}`}
	for _, kind := range beet.ChannelKinds {
		for _, outcome := range []string{"delivered", "retry", "failed", "suppressed"} {
			want = append(want, `beet_notify_deliveries_total{kind="`+string(kind)+`",outcome="`+outcome+`"}`)
		}
		want = append(want, `beet_notify_send_seconds_count{kind="`+string(kind)+`"}`)
	}
	for _, name := range want {
		if got := series(body, name); got != 0 {
			t.Errorf("%s = %v, want 0 from the start", name, got)
		}
	}
}

// TestMetricsJournalIsNotSpooling: with BEET_INGEST_ACK=journal the spool
// holds every ping for its first milliseconds, which is no outage:
// beet_ingest_spooling (what BeetSpooling alerts on) stays 0 while the
// database takes every commit.
func TestMetricsJournalIsNotSpooling(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.IngestAck = config.IngestAckJournal
	a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), NoJobs: true})
	acct, _, err := a.Backend().Service.CreateAccount(ctx, "journal@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Backend().Service.CreateBeet(ctx, acct.ID, service.BeetInput{Name: "j"})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if status, _ := get(t, a.URL()+"/api/v1/beet/"+b.Token, ""); status != 200 {
			t.Fatalf("ping = %d", status)
		}
		_, body := get(t, a.AdminURL()+"/metrics", "")
		if got := series(body, "beet_ingest_spooling"); got != 0 {
			t.Fatalf("beet_ingest_spooling = %v with a healthy database (spool bytes %v), want 0",
				got, series(body, "beet_ingest_spool_bytes"))
		}
	}
}

// TestRedisCheckedAtStart: a BEET_REDIS_URL that does not answer is said
// once at start, naming the setting, and the instance still starts (the
// limit is then per instance).
func TestRedisCheckedAtStart(t *testing.T) {
	cfg := testConfig(t)
	cfg.RedisURL = "redis://127.0.0.1:1/0" // nothing listens on port 1
	var buf testlog.Buffer
	a := startApp(t, cfg, app.Options{Log: testlog.New(&buf), NoJobs: true})
	if status, _ := get(t, a.AdminURL()+"/readyz", ""); status != 200 {
		t.Errorf("/readyz = %d, want 200: Redis is never needed to serve", status)
	}
	if log := buf.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "BEET_REDIS_URL") {
		t.Errorf("no warning naming BEET_REDIS_URL at start:\n%s", log)
	}
}

// TestMetricsRetention: a retention pass on SQLite moves the run counter
// and the last success time; every plan's deleted counter exists at 0; a
// pass stopped by shutdown counts as interrupted, not failed.
func TestMetricsRetention(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := testConfig(t)
	cfg.CleanupInterval = time.Hour
	a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), NoJobs: true, Now: func() time.Time { return at }})
	_, before := get(t, a.AdminURL()+"/metrics", "")
	if got := series(before, `beet_retention_last_success_timestamp_seconds`); got != 0 {
		t.Errorf("last success before any pass = %v, want 0", got)
	}
	if _, err := a.Backend().Service.Cleanup(context.Background(), at, false); err != nil {
		t.Fatal(err)
	}
	// A pass stopped by shutdown is no failure: an alert on failed passes
	// must not fire at every deploy.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Backend().Service.Cleanup(stopped, at, false); err == nil {
		t.Fatal("a pass with its context cancelled returned no error")
	}
	_, after := get(t, a.AdminURL()+"/metrics", "")
	want := map[string]float64{
		`beet_retention_runs_total{result="ok"}`:          1,
		`beet_retention_runs_total{result="failed"}`:      0,
		`beet_retention_runs_total{result="interrupted"}`: 1,
		`beet_retention_last_success_timestamp_seconds`:   float64(at.Unix()),
	}
	for _, p := range beet.Plans {
		want[`beet_retention_deleted_events_total{plan="`+string(p)+`"}`] = 0
	}
	for name, v := range want {
		if got := series(after, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
}
