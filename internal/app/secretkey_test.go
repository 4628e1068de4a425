package app_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testlog"
)

// TestChannelSecretEncryptedEndToEnd: with BEET_SECRET_KEY the webhook
// secret is sealed in the database file, yet the alert path opens it (the
// receiver checks the HMAC signature); without the key the next start says
// so, with the key it started with, and does not start.
func TestChannelSecretEncryptedEndToEnd(t *testing.T) {
	ctx := context.Background()
	const hookSecret = "whsec-e2e-Rt5Yb8Nc"
	var mu sync.Mutex
	var verified, got int
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("Beet-Signature") // t=<unix>,v1=<hex>
		ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		m := hmac.New(sha256.New, []byte(hookSecret))
		m.Write([]byte(ts + "." + string(body)))
		mu.Lock()
		got++
		if hmac.Equal([]byte(v1), []byte(hex.EncodeToString(m.Sum(nil)))) {
			verified++
		}
		mu.Unlock()
	}))
	defer recv.Close()

	raw := make([]byte, 32)
	rand.Read(raw)
	cfg := testConfig(t)
	cfg.AllowPrivateTargets = true
	cfg.SecretKey = base64.StdEncoding.EncodeToString(raw)
	logs := &testlog.Buffer{}
	a, err := app.New(ctx, cfg, app.Options{Log: testlog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	_, key, err := a.Backend().Service.CreateAccount(ctx, "ops@example.com", "correct horse", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, a.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	code, b := call("POST", "/api/v1/channels", `{"kind": "webhook", "name": "hook", "config": {"url": "`+recv.URL+`/hook", "secret": "`+hookSecret+`"}}`)
	var ch struct{ ID int64 }
	if code != 201 || json.Unmarshal(b, &ch) != nil {
		t.Fatalf("create channel: %d %s", code, b)
	}
	if code, b := call("POST", "/api/v1/channels/"+itoa(ch.ID)+"/test", ""); code != 200 || !strings.Contains(string(b), `"status":"delivered"`) {
		t.Fatalf("test the channel: %d %s", code, b)
	}
	mu.Lock()
	if got != 1 || verified != 1 {
		t.Errorf("the receiver got %d posts, %d with a signature made with the secret; want 1, 1", got, verified)
	}
	mu.Unlock()
	a.Stop(ctx)

	path := strings.TrimPrefix(cfg.DatabaseURL, "sqlite://")
	files, _ := os.ReadFile(path)
	wal, _ := os.ReadFile(path + "-wal")
	if bytes.Contains(append(files, wal...), []byte(hookSecret)) {
		t.Error("the database file holds the webhook secret in plain text")
	}
	if strings.Contains(logs.String(), cfg.SecretKey) || strings.Contains(logs.String(), "BEET_SECRET_KEY is not set") {
		t.Errorf("the log shows the key, or warns of no key with one set:\n%s", logs.String())
	}

	// Restart without the key: refused, with a sentence that says why.
	cfg.SecretKey = ""
	b2, err := app.New(ctx, cfg, app.Options{Log: testlog.New(&testlog.Buffer{})})
	if err == nil {
		b2.Stop(ctx)
		t.Fatal("started without the key the channel secrets need")
	}
	if !strings.Contains(err.Error(), "BEET_SECRET_KEY is not set") || strings.Contains(err.Error(), hookSecret) {
		t.Errorf("start without the key: %v", err)
	}
}

// TestNoSecretKeyWarns: serve without BEET_SECRET_KEY starts, storing
// channel secrets as given (the documented choice), and warns so.
func TestNoSecretKeyWarns(t *testing.T) {
	ctx := context.Background()
	logs := &testlog.Buffer{}
	a, err := app.New(ctx, testConfig(t), app.Options{Log: testlog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	a.Stop(ctx)
	if !strings.Contains(logs.String(), "BEET_SECRET_KEY is not set: channel secrets") {
		t.Errorf("no warning about channel secrets in plain text:\n%s", logs.String())
	}
}
