package notify_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// webhookBody is the webhook JSON exactly as CONTRACT §2 documents it (and
// our documented additions); unknown fields fail the decode.
type webhookBody struct {
	Event string `json:"event"`
	Beet  struct {
		ID           int64  `json:"id"`
		Name         string `json:"name"`
		Status       string `json:"status"`
		StatusReason string `json:"status_reason"`
		URL          string `json:"url"`
	} `json:"beet"`
	Flip struct {
		At       time.Time `json:"at"`
		From     string    `json:"from"`
		To       string    `json:"to"`
		Kind     string    `json:"kind"`
		Reason   string    `json:"reason"`
		Observed *float64  `json:"observed"`
		Expected *float64  `json:"expected"`
	} `json:"flip"`
	IdempotencyKey      string `json:"idempotency_key"`
	IncidentKey         string `json:"incident_key"`
	ResolvesIncidentKey string `json:"resolves_incident_key"`
	Reminder            int    `json:"reminder"`
	Flapping            bool   `json:"flapping"`
	Settled             bool   `json:"settled"`
	Message             string `json:"message"`
}

// verifySignature checks Beet-Signature as a receiver would: recompute the
// HMAC over "<t>.<body>" and refuse stale timestamps.
func verifySignature(t *testing.T, secret string, req request) {
	t.Helper()
	h := req.Header.Get("Beet-Signature")
	ts, sig, ok := strings.Cut(h, ",")
	if !ok || !strings.HasPrefix(ts, "t=") || !strings.HasPrefix(sig, "v1=") {
		t.Fatalf("Beet-Signature %q is not t=<unix>,v1=<hex>", h)
	}
	sec, err := strconv.ParseInt(strings.TrimPrefix(ts, "t="), 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("signature timestamp %q is not now", ts)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", sec)
	mac.Write(req.Body)
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(strings.TrimPrefix(sig, "v1=")), []byte(want)) {
		t.Fatalf("signature %s does not verify (want v1=%s)", sig, want)
	}
}

func TestWebhookDownAndRecovery(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine)
		rc := newReceiver(t)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL + "/hooks/beet", Secret: "whsec_test"})
		down := r.down()
		r.up()
		w := r.worker()
		ds := r.drain(w, ch)
		got := rc.requests()
		if len(got) != 2 || len(ds) != 2 {
			t.Fatalf("receiver got %d requests for %d deliveries, want 2 and 2", len(got), len(ds))
		}
		var alert, recovery webhookBody
		decodeStrict(t, got[0].Body, &alert)
		decodeStrict(t, got[1].Body, &recovery)
		for _, req := range got {
			verifySignature(t, "whsec_test", req)
			if req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Idempotency-Key") == "" {
				t.Errorf("headers %v", req.Header)
			}
		}
		if alert.Event != "beet.down" || alert.Beet.ID != r.beet.ID || alert.Beet.Name != "Checkout succeeded" ||
			alert.Beet.URL != fmt.Sprintf("https://beet.example.com/beets/%d", r.beet.ID) ||
			alert.Flip.From != "up" || alert.Flip.To != "down" || alert.Flip.Kind != "silence" ||
			alert.Flip.Observed == nil || *alert.Flip.Observed != 0 || alert.Flip.Expected == nil || *alert.Flip.Expected != 1 ||
			!alert.Flip.At.Equal(down.At.UTC().Truncate(time.Microsecond)) || alert.IdempotencyKey != got[0].Header.Get("Idempotency-Key") {
			t.Errorf("alert payload = %+v", alert)
		}
		if !strings.Contains(alert.Message, "Checkout succeeded is down") || !strings.Contains(alert.Message, "Europe/Riga") {
			t.Errorf("alert message %q lacks the name or the beet's time zone", alert.Message)
		}
		if recovery.Event != "beet.up" || recovery.IncidentKey != alert.IncidentKey || recovery.IdempotencyKey == alert.IdempotencyKey {
			t.Errorf("recovery = %+v; it must close the alert's incident with its own idempotency key", recovery)
		}
		if !strings.Contains(recovery.Message, "is back up") || !strings.Contains(recovery.Message, "after") {
			t.Errorf("recovery message %q", recovery.Message)
		}
		for _, d := range ds {
			if d.Status != beet.DeliveryDelivered || d.Attempts != 1 || d.LastAt == nil || d.Latency <= 0 {
				t.Errorf("delivery %+v", d)
			}
		}
	})
}

// TestRetryThenSucceed: a receiver that fails three times (503, 500, 429)
// then accepts gets the same message four times with one idempotency key,
// and the delivery ends delivered on attempt 4.
func TestRetryThenSucceed(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine)
		rc := newReceiver(t, 503, 500, 429, 200)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL + "/flaky"})
		r.down()
		ds := r.drain(r.worker(), ch)
		got := rc.requests()
		if len(got) != 4 {
			t.Fatalf("receiver got %d requests, want 4", len(got))
		}
		for _, req := range got[1:] {
			if req.Header.Get("Idempotency-Key") != got[0].Header.Get("Idempotency-Key") || !bytes.Equal(req.Body, got[0].Body) {
				t.Fatal("a retry is not the same message with the same idempotency key")
			}
		}
		if d := ds[0]; d.Status != beet.DeliveryDelivered || d.Attempts != 4 || d.Error != "" {
			t.Fatalf("delivery = %+v, want delivered on attempt 4", d)
		}
	})
}

func TestRetryAfterIsHonoured(t *testing.T) {
	r := newRig(t, "sqlite")
	rc := newReceiver(t, 429)
	rc.set(func(rc *receiver) { rc.header.Set("Retry-After", "1") })
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
	r.down()
	r.drain(r.worker(), ch)
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if gap := got[1].At.Sub(got[0].At); gap < time.Second {
		t.Fatalf("retried after %s, before the receiver's Retry-After of 1 s", gap)
	}
}

// TestShortRetryAfterDoesNotHurryRetries: a Retry-After shorter than the
// backoff (a maintenance page's "Retry-After: 1") does not make Beet retry
// every second for a day; a longer one is honoured.
func TestShortRetryAfterDoesNotHurryRetries(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		min, max   time.Duration
	}{{"1", 30 * time.Minute, time.Hour}, {"7200", 2 * time.Hour, 2*time.Hour + time.Minute}} {
		r := newRig(t, "sqlite")
		rc := newReceiver(t, 503)
		rc.set(func(rc *receiver) { rc.header.Set("Retry-After", tc.retryAfter) })
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		r.down()
		w := r.worker(func(w *notify.Worker) { w.BackoffBase, w.BackoffMax = time.Hour, time.Hour })
		start := time.Now()
		if n, err := w.Once(t.Context()); n != 1 || err != nil {
			t.Fatalf("claimed %d, %v", n, err)
		}
		ds, err := r.db.FindDeliveries(t.Context(), ch.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if wait := ds[0].NextAt.Sub(start); ds[0].Status != beet.DeliveryPending || wait < tc.min || wait > tc.max {
			t.Errorf("Retry-After %s with a 30-60 min backoff: retry in %s; want %s to %s", tc.retryAfter, wait, tc.min, tc.max)
		}
	}
}

func TestPermanentRefusalMarksChannelFailing(t *testing.T) {
	r := newRig(t, "sqlite")
	rc := newReceiver(t, 410)
	ch := r.channel(beet.ChannelSlack, beet.ChannelConfig{URL: rc.URL + "/services/T0/B0/sekretpathsekret"})
	r.down()
	var logs testlog.Buffer
	ds := r.drain(r.worker(func(w *notify.Worker) { w.Log = testlog.New(&logs) }), ch)
	if len(rc.requests()) != 1 {
		t.Fatalf("a 410 was retried: %d requests", len(rc.requests()))
	}
	if !strings.Contains(logs.String(), "410") || strings.Contains(logs.String(), "sekretpathsekret") {
		t.Fatalf("the log must say what failed and never the URL's secret path:\n%s", logs.String())
	}
	d := ds[0]
	if d.Status != beet.DeliveryFailed || !strings.Contains(d.Error, "410") || strings.Contains(d.Error, "sekretpathsekret") {
		t.Fatalf("delivery = %+v: want failed with the status and without the URL's secret path", d)
	}
	c, _ := r.db.FindChannelByID(context.Background(), ch.ID)
	if c.FailingSince == nil || !strings.Contains(c.FailingReason, "410") {
		t.Fatalf("channel not failing: %+v", c)
	}
}

// TestSendTimePrivateRefusal: with private targets not allowed, the dialer
// refuses the loopback receiver at send time (the address actually
// dialled), and retrying cannot help.
func TestSendTimePrivateRefusal(t *testing.T) {
	r := newRig(t, "sqlite")
	rc := newReceiver(t)
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: strings.Replace(rc.URL, "127.0.0.1", "localhost", 1) + "/x"})
	r.down()
	ds := r.drain(r.worker(func(w *notify.Worker) { w.Sender = notify.NewSender(notify.SenderOptions{}) }), ch)
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
	if d := ds[0]; d.Status != beet.DeliveryFailed || !strings.Contains(d.Error, "BEET_ALLOW_PRIVATE_TARGETS") {
		t.Fatalf("delivery = %+v", d)
	}
}

func TestSign(t *testing.T) {
	// A fixed vector, so receivers in other languages can check theirs.
	got := notify.Sign("secret", time.Unix(1700000000, 0), []byte(`{"event":"test"}`))
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write([]byte(`1700000000.{"event":"test"}`))
	if want := "t=1700000000,v1=" + hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// TestAlertSaysHowLongTheBeetHasBeenDown: a first alert says how long
// the beet had been down when it was first sent, so one that goes out
// late (sweeps held back, workers down) says so, and its retry says the
// same words; one sent at once says "under a minute ago".
func TestAlertSaysHowLongTheBeetHasBeenDown(t *testing.T) {
	riga, err := time.LoadLocation("Europe/Riga")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		late time.Duration
		ago  string
	}{{10*time.Minute + 30*time.Second, "10 min ago."}, {0, "under a minute ago."}} {
		r := newRig(t, "sqlite")
		rc := newReceiver(t, 500)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		f := r.flipAt(time.Now().Add(-tc.late), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
		r.drain(r.worker(), ch)
		got := rc.requests()
		if len(got) != 2 {
			t.Fatalf("the receiver got %d requests, want the alert and its retry", len(got))
		}
		var first, retry webhookBody
		decodeStrict(t, got[0].Body, &first)
		decodeStrict(t, got[1].Body, &retry)
		want := "Down since " + f.At.In(riga).Format("2006-01-02 15:04 MST") + " (Europe/Riga), " + tc.ago
		if !strings.HasSuffix(first.Message, want) || retry.Message != first.Message {
			t.Errorf("sent %s after the flip: %q, then %q; want both to end %q", tc.late, first.Message, retry.Message, want)
		}
	}
}

// TestEchoedSecretsAreScrubbed: many receivers' error pages repeat the
// request ("Cannot POST /services/T0/B0/SECRET"), and some the body. For
// the kinds whose URL path or query is the secret, and PagerDuty's routing
// key, neither the delivery's error, nor the channel's failing reason, nor
// the operator's log shows the secret.
func TestEchoedSecretsAreScrubbed(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pd struct {
			RoutingKey string `json:"routing_key"`
		}
		json.NewDecoder(r.Body).Decode(&pd)
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "Cannot POST %s (escaped %s) for %q", r.URL.RequestURI(), url.PathEscape(r.URL.Path), pd.RoutingKey)
	}))
	t.Cleanup(echo.Close)
	const secret, querySecret, routingKey = "SuperSecretToken123", "QuerySecret456", "R0utingKeyR0utingKeyR0utingKey12"
	for _, kind := range []beet.ChannelKind{beet.ChannelWebhook, beet.ChannelSlack, beet.ChannelDiscord, beet.ChannelTeams, beet.ChannelNtfy, beet.ChannelPagerDuty} {
		t.Run(string(kind), func(t *testing.T) {
			var log testlog.Buffer
			r := newRig(t, "sqlite")
			cfg := beet.ChannelConfig{URL: echo.URL + "/services/T000/B000/" + secret + "?token=" + querySecret}
			if kind == beet.ChannelPagerDuty {
				cfg = beet.ChannelConfig{RoutingKey: routingKey}
			}
			ch := r.channel(kind, cfg)
			r.down()
			ds := r.drain(r.worker(func(w *notify.Worker) {
				w.Log = testlog.New(&log)
				notify.SetPagerDutyURL(w.Sender, echo.URL+"/v2/enqueue")
			}), ch)
			c, err := r.db.FindChannelByID(t.Context(), ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ds[0].Error, "HTTP 404: Cannot POST") {
				t.Errorf("delivery error %q; want the receiver's answer", ds[0].Error)
			}
			for where, text := range map[string]string{"delivery error": ds[0].Error, "failing reason": c.FailingReason, "log": log.String()} {
				for _, s := range []string{secret, querySecret, routingKey} {
					if strings.Contains(text, s) {
						t.Errorf("the %s shows a secret: %s", where, text)
					}
				}
			}
		})
	}
}
