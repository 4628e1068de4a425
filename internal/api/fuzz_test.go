package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// fuzzAPI is the API in process over a real SQLite file, with one account
// and one beet and channel to aim PATCH and query strings at.
type fuzzAPI struct {
	mux       *http.ServeMux
	key       string
	beetID    int64
	channelID int64
}

func newFuzzAPI(f *testing.F) *fuzzAPI {
	ctx := context.Background()
	db := testdb.New(f, "sqlite")
	svc := service.New(db, service.Options{PasswordParams: cheapHash})
	a, key, err := svc.CreateAccount(ctx, "fuzz@example.com", "password-a", beet.PlanFree)
	if err != nil {
		f.Fatal(err)
	}
	b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "fuzzed"})
	if err != nil {
		f.Fatal(err)
	}
	c, err := svc.CreateChannel(ctx, a.ID, service.ChannelInput{Kind: beet.ChannelWebhook, Name: "hook",
		Config: beet.ChannelConfig{URL: "https://hooks.example.com/x", Secret: "whsec-fuzz-0123456789"}})
	if err != nil {
		f.Fatal(err)
	}
	mux := http.NewServeMux()
	api.New(svc, nil).Register(mux)
	return &fuzzAPI{mux: mux, key: key, beetID: b.ID, channelID: c.ID}
}

// serve sends one request in process and checks what every answer must be:
// never a 5xx, always JSON, and an error always has a code and a message.
func (fa *fuzzAPI) serve(t *testing.T, method, target, ctype string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://beet.test/", bytes.NewReader(body))
	if i := strings.IndexByte(target, '?'); i >= 0 {
		req.URL.Path, req.URL.RawQuery = target[:i], target[i+1:]
	} else {
		req.URL.Path = target
	}
	req.Header.Set("Authorization", "Bearer "+fa.key)
	req.Header.Set("Content-Type", ctype)
	rec := httptest.NewRecorder()
	fa.mux.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s %q: status %d: %s", method, target, body, rec.Code, rec.Body.Bytes())
	}
	if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect || rec.Code == http.StatusNoContent {
		return rec // the mux cleaning a path, or a deletion's empty answer
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q: %s", method, target, ct, rec.Body.Bytes())
	}
	if rec.Code >= 400 {
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Fatalf("%s %s: %d is not a JSON error with a code: %s", method, target, rec.Code, rec.Body.Bytes())
		}
	}
	return rec
}

// FuzzBeetBody sends any body, as JSON or another content type, to create
// and change a beet. Accepted settings are valid ones: the beet reads back
// with detection settings that pass validation.
func FuzzBeetBody(f *testing.F) {
	fa := newFuzzAPI(f)
	for _, s := range []string{
		`{"name": "nightly backup"}`,
		`{"name": "x", "timezone": "Europe/Riga", "detection": {"mode": "cron", "cron": "0 2 * * *", "timezone": "Europe/Riga", "grace_seconds": 600}}`,
		`{"name": "x", "detection": {"mode": "period", "period_seconds": 3600, "grace_seconds": 0}}`,
		`{"name": "x", "detection": {"mode": "auto"}, "allow_bots": true, "channels": []}`,
		`{"detection": {"mode": "cron", "cron": "0 0 31 2 *"}}`,
		`{"name": "<script>alert(1)</script>", "description": "=cmd|' /C calc'!A0"}`,
		`{"name": "x", "detection": {"mode": "period", "period_seconds": 9223372036854775807}}`,
		`{"name": null}`, `[]`, `{"name": "x"} {"name": "y"}`, "", "\xff",
	} {
		f.Add([]byte(s), "application/json", false)
		f.Add([]byte(s), "application/json", true)
	}
	f.Add([]byte("name=x"), "application/x-www-form-urlencoded", false)
	f.Add([]byte(`{"name": "x"}`), "text/plain", true)
	f.Fuzz(func(t *testing.T, body []byte, ctype string, patch bool) {
		method, target := http.MethodPost, "/api/v1/beets"
		if patch {
			method, target = http.MethodPatch, "/api/v1/beets/"+strconv.FormatInt(fa.beetID, 10)
		}
		rec := fa.serve(t, method, target, ctype, body)
		if rec.Code/100 != 2 {
			return
		}
		var got struct {
			ID        int64          `json:"id"`
			Detection beet.Detection `json:"detection"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("accepted %q but answered %s", body, rec.Body.Bytes())
		}
		if err := got.Detection.Validate(); err != nil {
			t.Fatalf("accepted %q with invalid detection %+v: %v", body, got.Detection, err)
		}
		if !patch {
			fa.serve(t, http.MethodDelete, "/api/v1/beets/"+strconv.FormatInt(got.ID, 10), "", nil)
		}
	})
}

// FuzzChannelBody sends any body to create and change a channel. The
// answer never carries the webhook secret whole.
func FuzzChannelBody(f *testing.F) {
	fa := newFuzzAPI(f)
	for _, s := range []string{
		`{"kind": "webhook", "name": "ops", "config": {"url": "https://hooks.example.com/a", "secret": "s3cr3t-value-long"}}`,
		`{"kind": "slack", "name": "s", "config": {"url": "https://hooks.slack.com/services/T/B/XYZ"}}`,
		`{"kind": "pagerduty", "name": "p", "config": {"routing_key": "0123456789abcdef0123456789abcdef"}}`,
		`{"kind": "email", "name": "e", "config": {"to": "ops@example.com"}}`,
		`{"kind": "ntfy", "name": "n", "config": {"url": "http://127.0.0.1/x"}, "reminder_every_seconds": 900}`,
		`{"kind": "webhook", "name": "w", "config": {"url": "javascript:alert(1)"}}`,
		`{"kind": "teams", "name": "t", "config": {"url": "https://user:pass@example.com/?token=abc"}}`,
		`{"kind": "gotify", "name": "g", "config": {"url": "gotify://gotify.example.com/AexampleToken1x"}}`,
		`{"kind": "telegram", "name": "tg", "config": {"url": "telegram://123:AAHsecret@telegram?chats=@x"}}`,
		`{"kind": "pushover", "name": "po", "config": {"url": "pushover://shoutrrr:apptoken@userkey/"}}`,
		`{"kind": "matrix", "name": "mx", "config": {"url": "https://matrix.example.com/"}}`,
		`{"kind": "discord", "config": {}}`, `{"name": ""}`, `{}`, "null",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, patch bool) {
		method, target := http.MethodPost, "/api/v1/channels"
		if patch {
			method, target = http.MethodPatch, "/api/v1/channels/"+strconv.FormatInt(fa.channelID, 10)
		}
		rec := fa.serve(t, method, target, "application/json", body)
		if rec.Code/100 != 2 {
			return
		}
		var in struct {
			Config struct{ Secret string } `json:"config"`
		}
		_ = json.Unmarshal(body, &in)
		if len(in.Config.Secret) >= 8 && in.Config.Secret != "********" && strings.Contains(rec.Body.String(), in.Config.Secret) {
			t.Fatalf("the secret %q is in the answer: %s", in.Config.Secret, rec.Body.Bytes())
		}
		if strings.Contains(rec.Body.String(), "whsec-fuzz-0123456789") {
			t.Fatalf("the stored secret is in the answer: %s", rec.Body.Bytes())
		}
		var got struct{ ID int64 }
		if !patch && json.Unmarshal(rec.Body.Bytes(), &got) == nil && got.ID != fa.channelID {
			fa.serve(t, http.MethodDelete, "/api/v1/channels/"+strconv.FormatInt(got.ID, 10), "", nil)
		}
	})
}

// FuzzQuery sends any query string (limits, offsets, statuses, times) and
// any path ID to the list calls.
func FuzzQuery(f *testing.F) {
	fa := newFuzzAPI(f)
	beetID := strconv.FormatInt(fa.beetID, 10)
	for _, s := range []struct{ path, query string }{
		{"/api/v1/beets", "limit=10&offset=0&status=down"},
		{"/api/v1/beets", "limit=-1&offset=99999999999999999999"},
		{"/api/v1/beets/" + beetID + "/events", "since=2026-01-01T00:00:00Z&until=2026-12-31T23:59:59.999999Z&limit=5"},
		{"/api/v1/beets/" + beetID + "/events", "since=1700000000&until=garbage"},
		{"/api/v1/beets/" + beetID + "/events", "since=%zz&limit=1e9"},
		{"/api/v1/beets/" + beetID + "/flips", "limit=0"},
		{"/api/v1/beets/" + beetID + "/problems", "limit=2147483648"},
		{"/api/v1/channels/1/deliveries", "limit=3"},
		{"/api/v1/incidents", "status=open&limit=50"},
		{"/api/v1/beets/-1/events", ""},
		{"/api/v1/beets/99999999999999999999/flips", ""},
		{"/api/v1/beets/%2e%2e/events", ""},
	} {
		f.Add(s.path, s.query)
	}
	f.Fuzz(func(t *testing.T, path, query string) {
		if !strings.HasPrefix(path, "/api/v1/") {
			path = "/api/v1/" + path
		}
		fa.serve(t, http.MethodGet, path+"?"+query, "", nil)
	})
}
