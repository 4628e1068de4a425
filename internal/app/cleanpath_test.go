package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
)

// A base URL that ends in a slash gives curl in a crontab a path with an
// empty segment (`curl -fsS "$BASE/api/v1/beet/$TOKEN"`). curl follows no
// redirect, so the mux's 307 to the clean path lost the ping; the path is
// now served clean, as nginx merges slashes, for the API as well.
func TestDoubleSlashPathsAreServedClean(t *testing.T) {
	ctx := context.Background()
	a := startApp(t, testConfig(t), app.Options{Log: slog.New(slog.DiscardHandler)})
	_, key, err := a.Backend().Service.CreateAccount(ctx, "slash@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	status, body := apiCall(t, a.URL(), key, "POST", "/api/v1/beets", `{"name": "Nightly backup"}`)
	var b struct {
		ID    int64
		Token string
	}
	if json.Unmarshal(body, &b); status != 201 {
		t.Fatalf("create beet: %d %s", status, body)
	}
	curl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"//api/v1/beet/", "/api/v1//beet/", "/api/v1/beet//", "/./api/v1/beet/"} {
		req, _ := http.NewRequest("GET", a.URL()+p+b.Token, nil)
		req.Header.Set("User-Agent", "curl/7.88.1") // curl -fsS -m 10 --retry 5 -o /dev/null URL
		req.Header.Set("Accept", "*/*")
		res, err := curl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/gif" {
			t.Errorf("GET %s<token>: %d %q, Location %q; want the 200 GIF", p, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Location"))
		}
	}
	status, body = apiCall(t, a.URL(), key, "GET", "/api/v1/beets/"+itoa(b.ID)+"/events", "")
	var evs struct{ Events []json.RawMessage }
	if json.Unmarshal(body, &evs); status != 200 || len(evs.Events) != 4 {
		t.Errorf("events after 4 pings on unclean paths: %d %s", status, body)
	}
	if status, body = apiCall(t, a.URL(), key, "GET", "/api/v1//beets/"+itoa(b.ID), ""); status != 200 || !json.Valid(body) {
		t.Errorf("GET /api/v1//beets/{id}: %d %s, want the beet as JSON", status, body)
	}
}
