package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testdb"
)

// inbox records what a loopback receiver (HTTP or SMTP) got, with times.
type inbox struct {
	mu   sync.Mutex
	msgs []string
	at   []time.Time
}

func (b *inbox) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, s)
	b.at = append(b.at, time.Now())
}

func (b *inbox) snapshot() ([]string, []time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.msgs...), append([]time.Time(nil), b.at...)
}

// waitFor waits until the inbox holds n messages, then a little longer to
// catch any duplicate, and returns them.
func (b *inbox) waitFor(t *testing.T, what string, n int) ([]string, []time.Time) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		msgs, _ := b.snapshot()
		if len(msgs) >= n {
			time.Sleep(1500 * time.Millisecond) // a second worker poll: nothing more may come
			msgs, at := b.snapshot()
			if len(msgs) != n {
				t.Fatalf("%s got %d messages, want exactly %d:\n%s", what, len(msgs), n, strings.Join(msgs, "\n"))
			}
			return msgs, at
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s got %d messages after 20 s, want %d", what, len(msgs), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpInbox(t *testing.T) (*inbox, string) {
	b := &inbox{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.add(string(body))
	}))
	t.Cleanup(srv.Close)
	return b, srv.URL
}

type mailBackend struct{ b *inbox }
type mailSession struct{ b *inbox }

func (m mailBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return mailSession(m), nil }
func (mailSession) Reset()                                        {}
func (mailSession) Logout() error                                 { return nil }
func (mailSession) Mail(string, *smtp.MailOptions) error          { return nil }
func (mailSession) Rcpt(string, *smtp.RcptOptions) error          { return nil }
func (s mailSession) Data(r io.Reader) error {
	body, err := io.ReadAll(r)
	s.b.add(string(body))
	return err
}

func smtpInbox(t *testing.T) (*inbox, string) {
	b := &inbox{}
	srv := smtp.NewServer(mailBackend{b})
	srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	// Closing the listener too: a Close that runs before Serve has taken
	// the listener leaves Serve blocked in Accept, which goleak reported
	// once under a busy go test ./... .
	t.Cleanup(func() { srv.Close(); l.Close() })
	return b, l.Addr().String()
}

// TestNotificationsLive runs the whole service: a period beet goes down on
// a live server, and a webhook, an email inbox and a Slack-format receiver
// each get the alert exactly once within seconds; the recovery closes the
// incident; a maintenance window silences the next outage; the API shows
// the delivery log.
func TestNotificationsLive(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		var clock atomic.Int64
		clock.Store(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()) }
		hooks, hookURL := httpInbox(t)
		slack, slackURL := httpInbox(t)
		mails, smtpAddr := smtpInbox(t)
		cfg := testConfig(t)
		cfg.DatabaseURL = testdb.URL(t, engine)
		cfg.SpoolPath = t.TempDir() + "/beet.spool"
		cfg.AllowPrivateTargets = true
		cfg.SMTPURL = "smtp://" + smtpAddr + "?from=alerts@beet.example.com&tls=none"
		a := startApp(t, cfg, app.Options{Log: slog.New(slog.DiscardHandler), Now: now})
		_, key, err := a.Backend().Service.CreateAccount(ctx, "live@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		call := func(method, path, body string) map[string]any {
			t.Helper()
			status, b := apiCall(t, a.URL(), key, method, path, body)
			if status >= 300 {
				t.Fatalf("%s %s: %d %s", method, path, status, b)
			}
			var out map[string]any
			json.Unmarshal(b, &out)
			return out
		}
		var channels []string
		for _, body := range []string{
			`{"kind": "webhook", "name": "hook", "config": {"url": "` + hookURL + `/beet", "secret": "whsec_live"}}`,
			`{"kind": "email", "name": "ops", "config": {"to": "ops@example.com"}}`,
			`{"kind": "slack", "name": "slack", "config": {"url": "` + slackURL + `/services/T0/B0/x"}}`,
		} {
			channels = append(channels, itoa(int64(call("POST", "/api/v1/channels", body)["id"].(float64))))
		}
		// Each channel's test message arrives at once.
		for _, id := range channels {
			if d := call("POST", "/api/v1/channels/"+id+"/test", ""); d["status"] != "delivered" {
				t.Fatalf("test message on channel %s: %v", id, d)
			}
		}
		hooks.waitFor(t, "webhook (test)", 1)
		slack.waitFor(t, "slack (test)", 1)
		mails.waitFor(t, "email (test)", 1)

		b := call("POST", "/api/v1/beets", `{"name": "Nightly export", "timezone": "Europe/Riga", "detection": {"mode": "period", "period_seconds": 60, "grace_seconds": 30}}`)
		id := itoa(int64(b["id"].(float64)))
		ping := func() {
			res, err := http.Get(a.URL() + "/api/v1/beet/" + b["token"].(string))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		waitStatus := func(want string) time.Time {
			t.Helper()
			deadline := time.Now().Add(20 * time.Second)
			for call("GET", "/api/v1/beets/"+id, "")["status"] != want {
				if time.Now().After(deadline) {
					t.Fatalf("beet never became %s", want)
				}
				time.Sleep(20 * time.Millisecond)
			}
			return time.Now()
		}
		ping()
		waitStatus("up")

		// Down: the alert reaches all three, once each.
		jump := time.Now()
		clock.Add(int64(2 * time.Minute))
		flipped := waitStatus("down")
		h, hAt := hooks.waitFor(t, "webhook", 2)
		s, sAt := slack.waitFor(t, "slack", 2)
		m, mAt := mails.waitFor(t, "email", 2)
		for what, at := range map[string]time.Time{"webhook": hAt[1], "slack": sAt[1], "email": mAt[1]} {
			t.Logf("%s: %s: alert %.2f s after the flip was visible, %.2f s after the clock passed the deadline",
				engine, what, at.Sub(flipped).Seconds(), at.Sub(jump).Seconds())
			if at.Sub(flipped) > 5*time.Second {
				t.Errorf("%s got the alert %s after the flip", what, at.Sub(flipped))
			}
		}
		var alert map[string]any
		json.Unmarshal([]byte(h[1]), &alert)
		if alert["event"] != "beet.down" || !strings.Contains(s[1], "Nightly export is down") || !strings.Contains(m[1], "Nightly export is down") {
			t.Fatalf("alert messages:\n%s\n%s\n%s", h[1], s[1], m[1])
		}

		// Recovery closes the incident.
		clock.Add(int64(time.Minute))
		ping()
		waitStatus("up")
		h, _ = hooks.waitFor(t, "webhook", 3)
		s, _ = slack.waitFor(t, "slack", 3)
		m, _ = mails.waitFor(t, "email", 3)
		var rec map[string]any
		json.Unmarshal([]byte(h[2]), &rec)
		if rec["event"] != "beet.up" || rec["incident_key"] != alert["incident_key"] || !strings.Contains(s[2], "is back up") || !strings.Contains(m[2], "is back up") {
			t.Fatalf("recovery messages:\n%s\n%s\n%s", h[2], s[2], m[2])
		}

		// Maintenance silences the next outage; the log shows it suppressed.
		start := now().Format(time.RFC3339)
		end := now().Add(time.Hour).Format(time.RFC3339)
		call("POST", "/api/v1/maintenance", fmt.Sprintf(`{"beet_id": %s, "starts_at": %q, "ends_at": %q, "note": "migration"}`, id, start, end))
		clock.Add(int64(2 * time.Minute))
		waitStatus("down")
		time.Sleep(3 * time.Second) // two worker polls
		hooks.waitFor(t, "webhook during maintenance", 3)
		slack.waitFor(t, "slack during maintenance", 3)
		mails.waitFor(t, "email during maintenance", 3)

		for _, ch := range channels {
			var log struct {
				Deliveries []struct {
					Status    string   `json:"status"`
					Event     string   `json:"event"`
					Attempts  int      `json:"attempts"`
					Error     string   `json:"error"`
					LatencyMS *float64 `json:"latency_ms"`
				}
			}
			_, body := apiCall(t, a.URL(), key, "GET", "/api/v1/channels/"+ch+"/deliveries", "")
			json.Unmarshal(body, &log)
			got := []string{}
			for _, d := range log.Deliveries {
				got = append(got, d.Event+":"+d.Status)
			}
			want := "beet.down:suppressed beet.up:delivered beet.down:delivered test:delivered"
			if strings.Join(got, " ") != want {
				t.Fatalf("channel %s log = %v, want %s", ch, got, want)
			}
			if d := log.Deliveries[1]; d.Attempts != 1 || d.LatencyMS == nil || *d.LatencyMS <= 0 {
				t.Errorf("channel %s recovery row = %+v", ch, d)
			}
			if !strings.Contains(log.Deliveries[0].Error, "maintenance") {
				t.Errorf("suppressed row says %q", log.Deliveries[0].Error)
			}
		}
		res, err := http.Get(a.AdminURL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, want := range []string{
			`beet_notify_deliveries_total{kind="webhook",outcome="delivered"} 3`,
			`beet_notify_deliveries_total{kind="email",outcome="delivered"} 3`,
			`beet_notify_deliveries_total{kind="slack",outcome="suppressed"} 1`,
			`beet_notify_send_seconds_count{kind="slack"} 3`,
		} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
