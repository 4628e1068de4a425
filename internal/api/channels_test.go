package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/service"
)

type channelOut struct {
	ID     int64             `json:"id"`
	Kind   string            `json:"kind"`
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

func (e *env) createChannel(key string, body any) channelOut {
	e.t.Helper()
	r := e.do(key, "POST", "/api/v1/channels", body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create channel: %d %s", r.status, r.body)
	}
	var c channelOut
	r.json(e.t, &c)
	return c
}

func TestChannelsCRUDAndMasking(t *testing.T) {
	e := newEnv(t)
	const hook = "https://hooks.example.com/services/T0001/B0002/verysecretpath"
	before := e.createBeet(e.keyA, map[string]any{"name": "made before"})
	c := e.createChannel(e.keyA, map[string]any{"kind": "webhook", "name": "ops hook",
		"config": map[string]any{"url": hook, "secret": "whsec_topsecret"}})
	r := e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/channels/%d", c.ID), nil)
	if r.status != 200 || strings.Contains(string(r.body), "verysecretpath") || strings.Contains(string(r.body), "topsecret") {
		t.Fatalf("GET channel leaks a secret: %s", r.body)
	}
	var got channelOut
	r.json(t, &got)
	if got.Kind != "webhook" || got.Config["secret"] != "********" || !strings.HasPrefix(got.Config["url"], "https://hooks.example.com/") {
		t.Fatalf("channel = %+v", got)
	}
	// Sending back the masked config keeps the stored secrets.
	r = e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/channels/%d", c.ID), map[string]any{"name": "renamed", "config": got.Config,
		"reminder_every_seconds": 3600})
	if r.status != 200 {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	stored, err := e.store.FindChannelByID(context.Background(), c.ID)
	if err != nil || stored.Config.URL != hook || stored.Config.Secret != "whsec_topsecret" || stored.Name != "renamed" {
		t.Fatalf("after PATCH with masked values: %+v, %v", stored, err)
	}
	// A new beet, and one made before the channel, both notify it.
	after := e.createBeet(e.keyA, map[string]any{"name": "made after"})
	for _, id := range []int64{before.ID, after.ID} {
		var bc struct{ Channels []int64 }
		e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d/channels", id), nil).json(t, &bc)
		if len(bc.Channels) != 1 || bc.Channels[0] != c.ID {
			t.Fatalf("beet %d channels = %v", id, bc.Channels)
		}
	}
	r = e.do(e.keyA, "PUT", fmt.Sprintf("/api/v1/beets/%d/channels", after.ID), map[string]any{"channels": []int64{}})
	if r.status != 200 || !strings.Contains(string(r.body), `"channels":[]`) {
		t.Fatalf("PUT channels []: %d %s", r.status, r.body)
	}
	var list struct{ Channels []channelOut }
	e.do(e.keyA, "GET", "/api/v1/channels", nil).json(t, &list)
	if len(list.Channels) != 1 {
		t.Fatalf("list = %+v", list)
	}
	if r := e.do(e.keyA, "DELETE", fmt.Sprintf("/api/v1/channels/%d", c.ID), nil); r.status != 204 {
		t.Fatalf("DELETE: %d", r.status)
	}
	if r := e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/channels/%d", c.ID), nil); r.status != 404 {
		t.Fatalf("GET deleted: %d", r.status)
	}
}

func TestAnotherAccountsChannelIsNotFound(t *testing.T) {
	e := newEnv(t)
	c := e.createChannel(e.keyA, map[string]any{"kind": "slack", "name": "A", "config": map[string]any{"url": "https://hooks.slack.com/services/A"}})
	bB := e.createBeet(e.keyB, map[string]any{"name": "B's beet"})
	bA := e.createBeet(e.keyA, map[string]any{"name": "A's beet"})
	base := fmt.Sprintf("/api/v1/channels/%d", c.ID)
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"PATCH", base, map[string]any{"name": "mine now"}},
		{"DELETE", base, nil},
		{"POST", base + "/test", nil},
		{"GET", base + "/deliveries", nil},
		{"PUT", fmt.Sprintf("/api/v1/beets/%d/channels", bB.ID), map[string]any{"channels": []int64{c.ID}}},
		{"GET", fmt.Sprintf("/api/v1/beets/%d/channels", bA.ID), nil},
		{"POST", "/api/v1/maintenance", map[string]any{"beet_id": bA.ID, "cron": "0 2 * * *", "timezone": "UTC", "duration_seconds": 3600}},
	} {
		r := e.do(e.keyB, tc.method, tc.path, tc.body)
		if code, _ := r.errorCode(t); r.status != 404 || code != "not_found" {
			t.Errorf("%s %s with B's key = %d %s, want 404 not_found", tc.method, tc.path, r.status, r.body)
		}
	}
	var list struct{ Channels []channelOut }
	e.do(e.keyB, "GET", "/api/v1/channels", nil).json(t, &list)
	if len(list.Channels) != 0 {
		t.Fatalf("B lists A's channels: %+v", list)
	}
	if got, _ := e.store.FindChannelByID(context.Background(), c.ID); got == nil || got.Name != "A" {
		t.Fatal("B's calls changed A's channel")
	}
}

func TestChannelValidation(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		body         string
		status       int
		field, words string
	}{
		{`{"kind": "pigeon", "name": "x", "config": {}}`, 422, "kind", "not a channel kind"},
		{`{"kind": "webhook", "name": "x", "config": {}}`, 422, "config.url", "required"},
		{`{"kind": "webhook", "name": "x", "config": {"url": "ftp://example.com/x"}}`, 422, "config.url", "http"},
		{`{"kind": "slack", "name": "x", "config": {"url": "https://example.com/x", "to": "a@example.com"}}`, 422, "config.to", "not a setting"},
		{`{"kind": "pagerduty", "name": "x", "config": {"routing_key": "short"}}`, 422, "config.routing_key", "32"},
		{`{"kind": "email", "name": "x", "config": {"to": "ops@example.com"}}`, 422, "kind", "BEET_SMTP_URL"},
		{`{"kind": "webhook", "name": "", "config": {"url": "https://example.com/x"}}`, 422, "name", "required"},
		{`{"kind": "webhook", "name": "x", "config": {"url": "https://example.com/x", "token": "t"}}`, 400, "config.token", "unknown"},
		{`{"kind": "webhook", "name": "x", "config": {"url": "https://example.com/x"}, "reminder_every_seconds": 60}`, 422, "reminder_every_seconds", "900"},
	} {
		r := e.do(e.keyA, "POST", "/api/v1/channels", tc.body)
		code, field := r.errorCode(t)
		if r.status != tc.status || field != tc.field || !strings.Contains(string(r.body), tc.words) {
			t.Errorf("%s → %d %s %s (%s), want %d on %s", tc.body, r.status, code, field, r.body, tc.status, tc.field)
		}
	}
}

// TestPrivateTargetsRefused shows the creation-time half of the
// private-address rule; the send-time half is in internal/notify.
func TestPrivateTargetsRefused(t *testing.T) {
	e := newEnv(t)
	e.svc.SetNotify(service.NotifyOptions{CheckTarget: func(ctx context.Context, u string) error {
		return notify.CheckTarget(ctx, u, false)
	}})
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/x", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data", "http://[::1]/x"} {
		r := e.do(e.keyA, "POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": map[string]any{"url": u}})
		if _, field := r.errorCode(t); r.status != 422 || field != "config.url" || !strings.Contains(string(r.body), "BEET_ALLOW_PRIVATE_TARGETS") {
			t.Errorf("%s → %d %s, want 422 on config.url", u, r.status, r.body)
		}
	}
	e.createChannel(e.keyA, map[string]any{"kind": "webhook", "name": "public", "config": map[string]any{"url": "https://93.184.215.14/hook"}})
}

func TestMaintenanceAPI(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "nightly"})
	r := e.do(e.keyA, "POST", "/api/v1/maintenance", map[string]any{"beet_id": b.ID, "cron": "0 2 * * *", "timezone": "Europe/Riga", "duration_seconds": 7200, "note": "backups"})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var m struct {
		ID     int64
		BeetID *int64 `json:"beet_id"`
		Active *bool
	}
	r.json(t, &m)
	if m.BeetID == nil || *m.BeetID != b.ID || m.Active == nil {
		t.Fatalf("window = %s", r.body)
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"cron": "61 2 * * *", "timezone": "UTC", "duration_seconds": 60}, "cron"},
		{map[string]any{"cron": "0 2 * * *", "timezone": "Mars/Base", "duration_seconds": 60}, "timezone"},
		{map[string]any{"cron": "0 2 * * *", "timezone": "UTC", "duration_seconds": 10}, "duration_seconds"},
		{map[string]any{"starts_at": "2026-01-02T00:00:00Z", "ends_at": "2026-01-01T00:00:00Z"}, "ends_at"},
		{map[string]any{}, "starts_at"},
	} {
		r := e.do(e.keyA, "POST", "/api/v1/maintenance", tc.body)
		if _, field := r.errorCode(t); r.status != 422 || field != tc.field {
			t.Errorf("%v → %d %s, want 422 on %s", tc.body, r.status, r.body, tc.field)
		}
	}
	if r := e.do(e.keyB, "DELETE", fmt.Sprintf("/api/v1/maintenance/%d", m.ID), nil); r.status != 404 {
		t.Fatalf("B deletes A's window: %d", r.status)
	}
	if r := e.do(e.keyA, "DELETE", fmt.Sprintf("/api/v1/maintenance/%d", m.ID), nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
}

func TestBeetChannelsField(t *testing.T) {
	e := newEnv(t)
	c1 := e.createChannel(e.keyA, map[string]any{"kind": "webhook", "name": "one", "config": map[string]any{"url": "https://example.com/1"}})
	c2 := e.createChannel(e.keyA, map[string]any{"kind": "slack", "name": "two", "config": map[string]any{"url": "https://example.com/2"}})
	foreign := e.createChannel(e.keyB, map[string]any{"kind": "webhook", "name": "B", "config": map[string]any{"url": "https://example.com/b"}})
	type withChannels struct {
		ID       int64
		Channels []int64
	}
	var all, some withChannels
	r := e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "all"})
	r.json(t, &all)
	if len(all.Channels) != 2 || all.Channels[0] != c1.ID || all.Channels[1] != c2.ID {
		t.Fatalf("a new beet's channels = %v, want all of the account's", all.Channels)
	}
	r = e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "some", "channels": []int64{c2.ID}})
	r.json(t, &some)
	if r.status != 201 || len(some.Channels) != 1 || some.Channels[0] != c2.ID {
		t.Fatalf("create with channels: %d %s", r.status, r.body)
	}
	r = e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "bad", "channels": []int64{foreign.ID}})
	if _, field := r.errorCode(t); r.status != 404 || field != "channels" {
		t.Fatalf("create with another account's channel: %d %s", r.status, r.body)
	}
	var list struct{ Beets []withChannels }
	e.do(e.keyA, "GET", "/api/v1/beets", nil).json(t, &list)
	if len(list.Beets) != 2 || len(list.Beets[0].Channels) != 2 || len(list.Beets[1].Channels) != 1 {
		t.Fatalf("list (the refused create must have made no beet) = %+v", list.Beets)
	}
	r = e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/beets/%d", all.ID), map[string]any{"channels": []int64{}})
	var patched withChannels
	r.json(t, &patched)
	if r.status != 200 || patched.Channels == nil || len(patched.Channels) != 0 {
		t.Fatalf("PATCH channels []: %d %s", r.status, r.body)
	}
	r = e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", all.ID), nil)
	if !strings.Contains(string(r.body), `"channels":[]`) {
		t.Fatalf("GET after PATCH: %s", r.body)
	}
}

// serviceURLs are a URL of each service-URL kind, each holding secrets
// named "s3cret…" where the service keeps them.
var serviceURLs = map[string]string{
	"telegram":   "telegram://123456789:AAHs3cretTelegramToken_abcdefgh@telegram?chats=@beetalerts",
	"pushover":   "pushover://shoutrrr:s3cretPushoverAppToken012345@s3cretPushoverUserKey0123456/?devices=phone",
	"gotify":     "gotify://gotify.example.com/As3cretGotify12?priority=5",
	"matrix":     "matrix://:s3cretMatrixAccessToken@matrix.example.com/?rooms=!s3cretRoom:example.com",
	"mattermost": "mattermost://mattermost.example.com/s3cretMattermostHook",
	"googlechat": "googlechat://chat.googleapis.com/v1/spaces/s3cretSpace/messages?key=s3cretKey&token=s3cretGcToken",
	"zulip":      "zulip://beet-bot%40example.com:s3cretZulipKey@example.zulipchat.com/?stream=alerts",
	"opsgenie":   "opsgenie://api.eu.opsgenie.com/s3cretOpsgenieKey",
	"rocketchat": "rocketchat://rocket.example.com/s3cretTokenA/s3cretTokenB",
}

// TestServiceURLChannelsMasked: each service-URL kind is created through
// the API with its service URL, checked by the library, and no answer
// shows a secret of it; sending the masked config back keeps the URL.
func TestServiceURLChannelsMasked(t *testing.T) {
	e := newEnv(t)
	e.svc.SetNotify(service.NotifyOptions{CheckTarget: func(ctx context.Context, u string) error {
		return notify.CheckTarget(ctx, u, true)
	}})
	for kind, u := range serviceURLs {
		c := e.createChannel(e.keyA, map[string]any{"kind": kind, "name": kind, "config": map[string]any{"url": u}})
		if !strings.HasPrefix(c.Config["url"], kind+"://") || strings.Contains(c.Config["url"], "s3cret") {
			t.Errorf("%s: created config.url %q", kind, c.Config["url"])
		}
		r := e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/channels/%d", c.ID), map[string]any{"name": kind + " 2", "config": c.Config})
		if r.status != 200 || strings.Contains(string(r.body), "s3cret") {
			t.Errorf("%s: PATCH with the masked config: %d %s", kind, r.status, r.body)
		}
		if stored, err := e.store.FindChannelByID(context.Background(), c.ID); err != nil || stored.Config.URL != u {
			t.Errorf("%s: stored URL after PATCH %v, %v", kind, stored, err)
		}
	}
	r := e.do(e.keyA, "GET", "/api/v1/channels", nil)
	if r.status != 200 || strings.Contains(string(r.body), "s3cret") || strings.Count(string(r.body), `"kind"`) != len(serviceURLs) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	for _, bad := range []struct{ kind, url, field, words string }{
		{"telegram", "telegram://123456789:AAHs3cretTelegramToken@telegram", "config.url", "no channels"},
		{"gotify", "https://gotify.example.com/As3cretGotify12", "config.url", "gotify://"},
		{"gotify", "gotify://gotify.example.com/s3cretGotifyToken", "config.url", "15 characters"},
		{"zulip", "zulip://bot%40example.com:s3cretZulipKey@example.zulipchat.com/", "config.url", "stream"},
		{"opsgenie", "opsgenie://api.opsgenie.com/s3cretKey", "config.secret", "not a setting"},
	} {
		body := map[string]any{"kind": bad.kind, "name": "x", "config": map[string]any{"url": bad.url}}
		if bad.field == "config.secret" {
			body["config"] = map[string]any{"url": bad.url, "secret": "x"}
		}
		r := e.do(e.keyA, "POST", "/api/v1/channels", body)
		if _, field := r.errorCode(t); r.status != 422 || field != bad.field || !strings.Contains(string(r.body), bad.words) || strings.Contains(string(r.body), "s3cret") {
			t.Errorf("%s → %d %s, want 422 on %s saying %q without the secret", bad.url, r.status, r.body, bad.field, bad.words)
		}
	}
}

// A test message goes wherever the channel points, so a channel sends at
// most 10 an hour: the 11th is a 429 rate_limited, and sends nothing.
func TestChannelTestsAreLimited(t *testing.T) {
	e := newEnv(t)
	c := e.createChannel(e.keyA, map[string]any{"kind": "webhook", "name": "ops hook",
		"config": map[string]any{"url": "https://hooks.example.com/x"}})
	path := fmt.Sprintf("/api/v1/channels/%d/test", c.ID)
	for i := range 10 {
		if r := e.do(e.keyA, "POST", path, nil); r.status != 200 {
			t.Fatalf("test %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.do(e.keyA, "POST", path, nil)
	if code, _ := r.errorCode(t); r.status != 429 || code != "rate_limited" {
		t.Fatalf("11th test: %d %s, want 429 rate_limited", r.status, r.body)
	}
	// It says when the next test is taken: when the first of the ten is
	// an hour old, a moment from now.
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 3500 || s > 3600 || !strings.Contains(string(r.body), "try again in 1 h") {
		t.Errorf("11th test: Retry-After %q, %s; want about 3600 s, and the wait in the message", r.header.Get("Retry-After"), r.body)
	}
	var log struct{ Deliveries []json.RawMessage }
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/channels/%d/deliveries", c.ID), nil).json(t, &log)
	if len(log.Deliveries) != 10 {
		t.Errorf("%d deliveries, want the 10 tests", len(log.Deliveries))
	}
}
