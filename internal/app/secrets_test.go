package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testlog"
)

// TestSecretsNeverWhole runs a whole scenario against the app in process
// at debug level: an account with a password and an API key, a beet fed
// good, bad and rate-limited events, a rotation, a webhook with a secret
// to a receiver that fails, a channel test, wrong keys and passwords. Then
// it greps every output an operator or another tenant could see (the log,
// /metrics, the API's answers apart from the ones that hand a token out,
// the delivery log) for the token, the old token, the API key, the password
// and the webhook secret: none may appear whole.
func TestSecretsNeverWhole(t *testing.T) {
	ctx := context.Background()
	var hits int
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Error(w, "receiver down", http.StatusInternalServerError)
	}))
	defer recv.Close()

	cfg := testConfig(t)
	cfg.AllowPrivateTargets = true
	logs := &testlog.Buffer{}
	a, err := app.New(ctx, cfg, app.Options{Log: testlog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	base := a.URL()

	const password = "Pa55word-never-logged"
	const hookSecret = "whsec-never-shown-0123456789"
	_, key, err := a.Backend().Service.CreateAccount(ctx, "secrets@example.com", password, beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder // every answer that must not carry a secret
	call := func(method, path, auth, body string, keep bool) []byte {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if keep {
			seen.WriteString(method + " " + beet.RedactPath(path) + " " + res.Status + "\n")
			seen.Write(b)
			seen.WriteString("\n")
		}
		return b
	}

	var bt struct {
		ID    int64
		Token string
	}
	json.Unmarshal(call("POST", "/api/v1/beets", key, `{"name": "secrets"}`, false), &bt)
	oldToken := bt.Token
	ingest := func(tok, body string) { call("POST", "/api/v1/beet/"+tok, "", body, false) }
	ingest(oldToken, `{"value": 1}`)
	ingest(oldToken, `{"value": "not a number"}`)
	for range 65 { // past the rate limit
		call("GET", "/api/v1/beet/"+oldToken, "", "", false)
	}
	var rot struct{ Token string }
	json.Unmarshal(call("POST", "/api/v1/beets/"+itoa(bt.ID)+"/rotate-token", key, "", false), &rot)
	newToken := rot.Token
	ingest(oldToken, "") // the dead token
	ingest(newToken, "{")
	nearMiss := newToken[:len(newToken)-1] + "x"
	if nearMiss == newToken {
		nearMiss = newToken[:len(newToken)-1] + "y"
	}
	ingest(nearMiss, "") // a near miss

	var ch struct{ ID int64 }
	json.Unmarshal(call("POST", "/api/v1/channels", key, `{"kind": "webhook", "name": "hook", "config": {"url": "`+recv.URL+`/hook/`+hookSecret+`", "secret": "`+hookSecret+`"}}`, true), &ch)
	call("POST", "/api/v1/channels/"+itoa(ch.ID)+"/test", key, "", true)
	call("GET", "/api/v1/channels/"+itoa(ch.ID), key, "", true)
	call("GET", "/api/v1/channels", key, "", true)
	call("PATCH", "/api/v1/channels/"+itoa(ch.ID), key, `{"config": {"secret": "`+hookSecret+`-2"}}`, true)
	// The beet itself (GET /api/v1/beets) carries its token to its owner
	// by contract, so it is not among the outputs checked.
	call("GET", "/api/v1/beets/"+itoa(bt.ID)+"/problems", key, "", true)
	call("GET", "/api/v1/beets/"+itoa(bt.ID)+"/events", key, "", true)
	call("GET", "/api/v1/beets", key+"x", "", true)            // a wrong key
	call("GET", "/api/v1/beets", "bk_"+oldToken[3:], "", true) // a token as a key
	call("GET", "/api/v1/beets/"+oldToken, key, "", true)      // a token as an ID
	call("PATCH", "/api/v1/beets/"+itoa(bt.ID), key, `{"name": `+strings.Repeat("x", 70000)+`}`, true)
	// Wrong and right passwords on the dashboard.
	for _, pw := range []string{password + "x", password} {
		res, err := http.PostForm(base+"/login", map[string][]string{"email": {"secrets@example.com"}, "password": {pw}})
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			seen.Write(b)
		}
	}
	// The delivery log, once the worker has tried the failing receiver.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b := call("GET", "/api/v1/channels/"+itoa(ch.ID)+"/deliveries", key, "", false)
		if strings.Contains(string(b), `"error"`) || time.Now().After(deadline) {
			seen.Write(b)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if hits == 0 {
		t.Error("the receiver was never called: the delivery path did not run")
	}
	metrics := string(call("GET", "/metrics", "", "", false))

	outputs := map[string]string{"log": logs.String(), "metrics": metrics, "API and dashboard answers": seen.String()}
	secrets := map[string]string{"token": newToken, "old token": oldToken, "API key": key, "password": password,
		"webhook secret": hookSecret}
	for what, out := range outputs {
		if len(out) < 100 {
			t.Errorf("%s is nearly empty (%d bytes): the scenario did not run", what, len(out))
		}
		for name, s := range secrets {
			if strings.Contains(out, s) {
				i := strings.Index(out, s)
				t.Errorf("the %s is whole in the %s: …%s…", name, what, out[max(0, i-120):min(len(out), i+len(s)+40)])
			}
		}
	}
	if !strings.Contains(logs.String(), "level=") {
		t.Error("nothing was logged")
	}
}
