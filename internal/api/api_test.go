package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// env is a real API server over a real SQLite file, with two accounts.
type env struct {
	t     *testing.T
	srv   *httptest.Server
	store beet.Store
	svc   *service.Service
	keyA  string
	keyB  string
	acctA int64
}

var cheapHash = &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvOn(t, "sqlite") }

// newEnvOn is newEnv on a store engine of testdb.Engines.
func newEnvOn(t *testing.T, engine string) *env {
	t.Helper()
	return newEnvWith(t, engine, service.Options{})
}

// newEnvWith is newEnvOn with the service's options (a clock).
func newEnvWith(t *testing.T, engine string, opts service.Options) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t, engine)
	opts.PasswordParams = cheapHash
	svc := service.New(db, opts)
	a, keyA, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	_, keyB, err := svc.CreateAccount(ctx, "b@example.com", "password-b", beet.PlanPro)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.New(svc, nil).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, store: db, svc: svc, keyA: keyA, keyB: keyB, acctA: a.ID}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, r.body)
	}
}

// errorCode returns the code and field of a JSON error response.
func (r response) errorCode(t *testing.T) (code, field string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, Field string }
	}
	r.json(t, &e)
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not a JSON error with code and message: %s", r.body)
	}
	return e.Error.Code, e.Error.Field
}

func (e *env) do(key, method, path string, body any) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, _ := json.Marshal(b)
		rd = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

type beetOut struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Token        string         `json:"token"`
	Status       string         `json:"status"`
	StatusReason string         `json:"status_reason"`
	Timezone     string         `json:"timezone"`
	Detection    beet.Detection `json:"detection"`
	LastEventAt  *time.Time     `json:"last_event_at"`
}

func (e *env) createBeet(key string, body any) beetOut {
	e.t.Helper()
	r := e.do(key, "POST", "/api/v1/beets", body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create beet: %d %s", r.status, r.body)
	}
	var b beetOut
	r.json(e.t, &b)
	return b
}

func TestCreateGetAndRotateToken(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Checkout succeeded"})
	if !beet.ValidTokenShape(b.Token) || b.Status != "new" || b.Timezone != "UTC" || b.Detection.Mode != beet.ModeAuto {
		t.Fatalf("new beet = %+v", b)
	}
	r := e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", b.ID), nil)
	if r.header.Get("X-Content-Type-Options") != "nosniff" || e.do(e.keyA, "GET", "/api/v1/beets/nope", nil).header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("API JSON without X-Content-Type-Options: nosniff: %v", r.header)
	}
	var got beetOut
	r.json(t, &got)
	if r.status != 200 || got.Token != b.Token || got.Name != "Checkout succeeded" {
		t.Fatalf("get beet: %d %s", r.status, r.body)
	}

	r = e.do(e.keyA, "POST", fmt.Sprintf("/api/v1/beets/%d/rotate-token", b.ID), nil)
	var rot struct{ Token string }
	r.json(t, &rot)
	if r.status != 200 || !beet.ValidTokenShape(rot.Token) || rot.Token == b.Token {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	if _, err := e.store.FindBeetByToken(context.Background(), b.Token); !beet.IsNotFound(err) {
		t.Fatalf("old token still finds a beet (err %v)", err)
	}
	if found, err := e.store.FindBeetByToken(context.Background(), rot.Token); err != nil || found.ID != b.ID {
		t.Fatalf("new token finds %v, %v", found, err)
	}
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", b.ID), nil).json(t, &got)
	if got.Token != rot.Token {
		t.Fatalf("beet shows token %q after rotation to %q", got.Token, rot.Token)
	}
}

func TestAnotherAccountsBeetIsNotFound(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "A's beet"})
	base := fmt.Sprintf("/api/v1/beets/%d", b.ID)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"PATCH", base, map[string]any{"name": "stolen"}},
		{"DELETE", base, nil},
		{"POST", base + "/rotate-token", nil},
		{"POST", base + "/pause", nil},
		{"POST", base + "/resume", nil},
		{"GET", base + "/events", nil},
		{"GET", base + "/flips", nil},
		{"GET", base + "/problems", nil},
	} {
		r := e.do(e.keyB, c.method, c.path, c.body)
		if code, _ := r.errorCode(t); r.status != 404 || code != "not_found" {
			t.Errorf("B %s %s: %d %s, want 404 not_found", c.method, c.path, r.status, r.body)
		}
	}
	var list struct{ Beets []beetOut }
	e.do(e.keyB, "GET", "/api/v1/beets", nil).json(t, &list)
	if len(list.Beets) != 0 {
		t.Fatalf("B's list shows %d beets of A", len(list.Beets))
	}
	// Nothing B tried changed A's beet.
	var got beetOut
	e.do(e.keyA, "GET", base, nil).json(t, &got)
	if got.Name != "A's beet" || got.Token != b.Token || got.Status != "new" {
		t.Fatalf("A's beet changed by B: %+v", got)
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k, revoked, err := e.svc.CreateAPIKey(ctx, e.acctA, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	for name, header := range map[string]string{
		"missing":       "",
		"wrong scheme":  "Basic " + e.keyA,
		"bad shape":     "Bearer bk_nope",
		"unknown key":   "Bearer " + beet.NewAPIKey(),
		"revoked key":   "Bearer " + revoked,
		"ingest token":  "Bearer " + beet.NewToken(),
		"no key at all": "Bearer ",
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/beets", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		r := response{res.StatusCode, res.Header, body}
		if code, _ := r.errorCode(t); r.status != 401 || code != "unauthorized" || res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s", name, r.status, body)
		}
		if strings.Contains(string(body), revoked[beet.RedactedLen:]) {
			t.Errorf("%s: error shows the key: %s", name, body)
		}
	}
	if r := e.do(e.keyA, "GET", "/api/v1/beets", nil); r.status != 200 {
		t.Fatalf("valid key: %d %s", r.status, r.body)
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("x", 201)
	for _, c := range []struct {
		name        string
		body        any
		contentType string
		status      int
		code, field string
	}{
		{"no name", map[string]any{}, "", 422, "validation_failed", "name"},
		{"blank name", map[string]any{"name": "  "}, "", 422, "validation_failed", "name"},
		{"long name", map[string]any{"name": long}, "", 422, "validation_failed", "name"},
		{"bad timezone", map[string]any{"name": "x", "timezone": "Mars/Base"}, "", 422, "validation_failed", "timezone"},
		{"short period", map[string]any{"name": "x", "detection": map[string]any{"mode": "period", "period_seconds": 10}}, "", 422, "validation_failed", "detection.period_seconds"},
		{"no period", map[string]any{"name": "x", "detection": map[string]any{"mode": "period"}}, "", 422, "validation_failed", "detection.period_seconds"},
		{"fractional period", map[string]any{"name": "x", "detection": map[string]any{"mode": "period", "period_seconds": 60.5}}, "", 422, "validation_failed", "detection.period_seconds"},
		{"unknown config field", map[string]any{"name": "x", "detection": map[string]any{"mode": "auto"}, "tags": []string{"a"}, "colour": 1}, "", 400, "invalid", "colour"},
		{"bad cron", map[string]any{"name": "x", "detection": map[string]any{"mode": "cron", "cron": "0 25 * * *", "timezone": "UTC"}}, "", 422, "validation_failed", "detection.cron"},
		{"bad mode", map[string]any{"name": "x", "detection": map[string]any{"mode": "sometimes"}}, "", 422, "validation_failed", "detection.mode"},
		{"name not a string", map[string]any{"name": 5}, "", 422, "validation_failed", "name"},
		{"unknown field", map[string]any{"name": "x", "colour": "red"}, "", 400, "invalid", "colour"},
		{"unknown detection field", map[string]any{"name": "x", "detection": map[string]any{"mode": "auto", "every": 5}}, "", 400, "invalid", "detection.every"},
		{"not JSON", "{name: x", "", 400, "invalid", ""},
		{"array", "[1,2]", "", 400, "invalid", ""},
		{"two values", `{"name":"x"}{"name":"y"}`, "", 400, "invalid", ""},
		{"empty body", "", "", 400, "invalid", ""},
		{"form body", "name=x", "application/x-www-form-urlencoded", 415, "unsupported_media_type", ""},
		{"too large", `{"name":"` + strings.Repeat("x", 70000) + `"}`, "", 413, "payload_too_large", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rd io.Reader
			if s, ok := c.body.(string); ok {
				rd = strings.NewReader(s)
			} else {
				b, _ := json.Marshal(c.body)
				rd = bytes.NewReader(b)
			}
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/beets", rd)
			req.Header.Set("Authorization", "Bearer "+e.keyA)
			req.Header.Set("Content-Type", "application/json")
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			r := response{res.StatusCode, res.Header, body}
			code, field := r.errorCode(t)
			if r.status != c.status || code != c.code || field != c.field {
				t.Fatalf("%d %s, want %d %s field %q", r.status, body, c.status, c.code, c.field)
			}
		})
	}
	// Nothing was created by any of it.
	var list struct{ Total int }
	e.do(e.keyA, "GET", "/api/v1/beets", nil).json(t, &list)
	if list.Total != 0 {
		t.Fatalf("bad requests created %d beets", list.Total)
	}
}

func TestPatchChangesOnlyWhatIsSent(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Nightly backup", "description": "db dump", "timezone": "Europe/Riga"})
	path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
	r := e.do(e.keyA, "PATCH", path, map[string]any{"detection": map[string]any{"mode": "cron", "cron": "0 2 * * *", "timezone": "Europe/Riga", "grace_seconds": 600}})
	var got beetOut
	r.json(t, &got)
	var raw map[string]any
	r.json(t, &raw)
	if raw["expectation"] != "Expects a run every day at 02:00 Europe/Riga; a missed run is flagged 10 min after its time." {
		t.Errorf("expectation %q", raw["expectation"])
	}
	if r.status != 200 || got.Name != "Nightly backup" || got.Description != "db dump" || got.Timezone != "Europe/Riga" ||
		got.Detection.Mode != beet.ModeCron || got.Detection.Cron != "0 2 * * *" || got.Detection.GraceSeconds != 600 {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	// An invalid change is refused whole, and the beet stays as it was.
	r = e.do(e.keyA, "PATCH", path, map[string]any{"name": "Renamed", "timezone": "Nowhere/City"})
	if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "timezone" {
		t.Fatalf("bad patch: %d %s", r.status, r.body)
	}
	e.do(e.keyA, "GET", path, nil).json(t, &got)
	if got.Name != "Nightly backup" || got.Timezone != "Europe/Riga" {
		t.Fatalf("refused patch changed the beet: %+v", got)
	}
}

func TestPauseResumeRecordFlips(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Webhook"})
	path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
	var got beetOut
	e.do(e.keyA, "POST", path+"/pause", nil).json(t, &got)
	if got.Status != "paused" || got.StatusReason == "" {
		t.Fatalf("after pause: %+v", got)
	}
	e.do(e.keyA, "POST", path+"/pause", nil).json(t, &got) // pausing twice changes nothing
	e.do(e.keyA, "POST", path+"/resume", nil).json(t, &got)
	if got.Status != "new" {
		t.Fatalf("resume of a beet without events: status %q, want new", got.Status)
	}
	var flips struct {
		Flips []struct{ From, To, Kind, Reason string }
	}
	e.do(e.keyA, "GET", path+"/flips", nil).json(t, &flips)
	if len(flips.Flips) != 2 || flips.Flips[0].From != "paused" || flips.Flips[0].To != "new" ||
		flips.Flips[1].From != "new" || flips.Flips[1].To != "paused" || flips.Flips[1].Kind != "manual" || flips.Flips[1].Reason == "" {
		t.Fatalf("flips: %+v", flips)
	}
}

func TestEventsPages(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Checkout"})
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	var events []beet.Event
	for i := range 25 {
		ev := beet.Event{BeetID: b.ID, ReceivedAt: t0.Add(time.Duration(i) * time.Minute), Method: "GET", UserAgent: "test"}
		ev.ID[0], ev.ID[15] = byte(i), 1
		if i%2 == 0 {
			v := float64(i) + 0.5
			ev.Value = &v
		}
		events = append(events, ev)
	}
	if err := e.store.AddEvents(context.Background(), events, nil); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Events []struct {
			ReceivedAt time.Time `json:"received_at"`
			Value      *float64  `json:"value"`
		}
	}
	path := fmt.Sprintf("/api/v1/beets/%d/events", b.ID)
	var p page
	e.do(e.keyA, "GET", path+"?limit=10", nil).json(t, &p)
	if len(p.Events) != 10 || !p.Events[0].ReceivedAt.Equal(events[24].ReceivedAt) || p.Events[0].Value == nil || *p.Events[0].Value != 24.5 || p.Events[1].Value != nil {
		t.Fatalf("first page: %+v", p)
	}
	// Page back with until = the oldest seen; since bounds the start.
	until := p.Events[9].ReceivedAt.Format(time.RFC3339Nano)
	since := events[5].ReceivedAt.Format(time.RFC3339Nano)
	e.do(e.keyA, "GET", path+"?limit=100&until="+until+"&since="+since, nil).json(t, &p)
	if len(p.Events) != 10 || !p.Events[0].ReceivedAt.Equal(events[14].ReceivedAt) || !p.Events[9].ReceivedAt.Equal(events[5].ReceivedAt) {
		t.Fatalf("second page has %d events: %+v", len(p.Events), p)
	}
	for q, field := range map[string]string{"limit=1001": "limit", "limit=-1": "limit", "limit=0": "limit", "limit=ten": "limit", "since=yesterday": "since", "until=2026-13-01": "until"} {
		r := e.do(e.keyA, "GET", path+"?"+q, nil)
		if code, f := r.errorCode(t); r.status != 422 || code != "validation_failed" || f != field {
			t.Errorf("?%s: %d %s", q, r.status, r.body)
		}
	}
	// last_event_at follows the newest event.
	var got beetOut
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", b.ID), nil).json(t, &got)
	if got.LastEventAt == nil || !got.LastEventAt.Equal(events[24].ReceivedAt) {
		t.Fatalf("last_event_at = %v, want %v", got.LastEventAt, events[24].ReceivedAt)
	}
}

func TestProblemsAreListed(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Beacon"})
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := e.store.AddProblem(context.Background(), &beet.Problem{BeetID: b.ID, At: at, Kind: beet.ProblemBadValue, Detail: `value "abc" is not a number`}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Problems []struct {
			At           time.Time
			Kind, Detail string
		}
	}
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d/problems", b.ID), nil).json(t, &out)
	if len(out.Problems) != 1 || out.Problems[0].Kind != "bad_value" || !out.Problems[0].At.Equal(at) {
		t.Fatalf("problems: %+v", out)
	}
}

func TestListPagingAndFilter(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.createBeet(e.keyA, map[string]any{"name": fmt.Sprintf("beet %d", i)})
	}
	e.createBeet(e.keyB, map[string]any{"name": "B's"})
	var list struct {
		Beets []beetOut
		Total int
	}
	e.do(e.keyA, "GET", "/api/v1/beets?limit=2&offset=2", nil).json(t, &list)
	if list.Total != 5 || len(list.Beets) != 2 || list.Beets[0].Name != "beet 2" {
		t.Fatalf("page: %+v", list)
	}
	e.do(e.keyA, "POST", fmt.Sprintf("/api/v1/beets/%d/pause", list.Beets[0].ID), nil)
	e.do(e.keyA, "GET", "/api/v1/beets?status=paused", nil).json(t, &list)
	if list.Total != 1 || list.Beets[0].Name != "beet 2" {
		t.Fatalf("paused filter: %+v", list)
	}
	if r := e.do(e.keyA, "GET", "/api/v1/beets?status=sleepy", nil); r.status != 422 {
		t.Fatalf("unknown status filter: %d", r.status)
	}
}

// TestListBeetsNext: a list of beets that leaves some out says where the
// next page starts; following it, with the same filters, reaches every
// beet, past the default page of 100 too.
func TestListBeetsNext(t *testing.T) {
	e := newEnv(t)
	for i := range 105 {
		if _, err := e.svc.CreateBeet(context.Background(), e.acctA, service.BeetInput{Name: fmt.Sprintf("beet %03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	type page struct {
		Beets []beetOut
		Total int
		Next  *struct{ Offset *int }
	}
	names := map[string]bool{}
	query, pages := "/api/v1/beets", 0
	for query != "" {
		var p page
		e.do(e.keyA, "GET", query, nil).json(t, &p)
		if p.Total != 105 {
			t.Fatalf("%s: total %d", query, p.Total)
		}
		for _, b := range p.Beets {
			names[b.Name] = true
		}
		pages++
		query = ""
		if p.Next != nil {
			if p.Next.Offset == nil {
				t.Fatalf("next without offset: %+v", p.Next)
			}
			query = fmt.Sprintf("/api/v1/beets?offset=%d", *p.Next.Offset)
		}
	}
	if len(names) != 105 || pages != 2 {
		t.Fatalf("followed next over %d pages to %d beets, want 105 over 2", pages, len(names))
	}
	// With a filter and a limit: the last page has no next.
	var p page
	for _, id := range []int64{3, 4, 5} {
		e.do(e.keyA, "POST", fmt.Sprintf("/api/v1/beets/%d/pause", id), nil)
	}
	e.do(e.keyA, "GET", "/api/v1/beets?status=paused&limit=2", nil).json(t, &p)
	if len(p.Beets) != 2 || p.Total != 3 || p.Next == nil || p.Next.Offset == nil || *p.Next.Offset != 2 {
		t.Fatalf("first page of paused beets: %+v", p)
	}
	p = page{}
	e.do(e.keyA, "GET", "/api/v1/beets?status=paused&limit=2&offset=2", nil).json(t, &p)
	if len(p.Beets) != 1 || p.Next != nil {
		t.Fatalf("last page of paused beets: %+v", p)
	}
}

func TestDeleteBeet(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Temp"})
	path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
	if r := e.do(e.keyA, "DELETE", path, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := e.do(e.keyA, "GET", path, nil); r.status != 404 {
		t.Fatalf("get after delete: %d", r.status)
	}
	if _, err := e.store.FindBeetByToken(context.Background(), b.Token); !beet.IsNotFound(err) {
		t.Fatalf("deleted beet's token still found: %v", err)
	}
}

func TestUnknownPathsAndMethodsAnswerJSON(t *testing.T) {
	e := newEnv(t)
	r := e.do(e.keyA, "GET", "/api/v1/nothing-here", nil)
	if code, _ := r.errorCode(t); r.status != 404 || code != "not_found" {
		t.Fatalf("unknown path: %d %s", r.status, r.body)
	}
	r = e.do(e.keyA, "PUT", "/api/v1/beets", nil)
	if code, _ := r.errorCode(t); r.status != 405 || code != "method_not_allowed" || r.header.Get("Allow") != "GET, POST" {
		t.Fatalf("PUT /beets: %d %v %s", r.status, r.header, r.body)
	}
	r = e.do(e.keyA, "GET", "/api/v1/beets/abc", nil)
	if r.status != 404 {
		t.Fatalf("non-numeric id: %d", r.status)
	}
	r = e.do("", "GET", "/api/v1/openapi.json", nil)
	var doc struct{ OpenAPI string }
	r.json(t, &doc)
	if r.status != 200 || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi.json: %d", r.status)
	}
}

// TestIncidentsAreListed: the global guard's incidents, open first, each
// account counting only its own held beets.
func TestIncidentsAreListed(t *testing.T) {
	e := newEnv(t)
	var out struct {
		Incidents []struct {
			Open      bool   `json:"open"`
			Reason    string `json:"reason"`
			EndReason string `json:"end_reason"`
			Held      int    `json:"held"`
		} `json:"incidents"`
	}
	if r := e.do(e.keyA, "GET", "/api/v1/incidents", nil); r.status != 200 || string(r.body) != "{\"incidents\":[]}\n" {
		t.Fatalf("no incidents: %d %s", r.status, r.body)
	}
	ctx := context.Background()
	old := &beet.Incident{StartedAt: time.Now().Add(-time.Hour), Reason: "earlier"}
	if err := e.store.StartIncident(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := e.store.EndIncident(ctx, old.ID, time.Now().Add(-30*time.Minute), "flowing again"); err != nil {
		t.Fatal(err)
	}
	now := &beet.Incident{StartedAt: time.Now(), Reason: "now"}
	if err := e.store.StartIncident(ctx, now); err != nil {
		t.Fatal(err)
	}
	// It holds one of account A's beets: A counts it, B does not.
	b := e.createBeet(e.keyA, map[string]any{"name": "held"})
	due := time.Now().Add(-time.Minute).Truncate(time.Microsecond)
	if err := e.store.SetBeetDue(ctx, b.ID, &due); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.store.HoldBeet(ctx, now.ID, b.ID, due, due.Add(5*time.Minute)); !ok || err != nil {
		t.Fatalf("hold: %v %v", ok, err)
	}
	r := e.do(e.keyB, "GET", "/api/v1/incidents", nil)
	r.json(t, &out)
	if r.status != 200 || len(out.Incidents) != 2 || !out.Incidents[0].Open || out.Incidents[0].Reason != "now" ||
		out.Incidents[1].Open || out.Incidents[1].EndReason != "flowing again" || out.Incidents[0].Held != 0 {
		t.Fatalf("incidents: %d %s", r.status, r.body)
	}
	r = e.do(e.keyA, "GET", "/api/v1/incidents", nil)
	if r.json(t, &out); out.Incidents[0].Held != 1 {
		t.Errorf("account A's held beet not counted: %s", r.body)
	}
	if r := e.do("", "GET", "/api/v1/incidents", nil); r.status != 401 {
		t.Errorf("without a key: %d", r.status)
	}
}

// Messages that say what to send: a whole number, a required field, the
// unknown field's path.
func TestBadInputMessages(t *testing.T) {
	e := newEnv(t)
	for body, want := range map[string]string{
		`{"name": "x", "detection": {"mode": "period", "period_seconds": 60.5}}`: "must be a whole number, not 60.5",
		`{"name": "x", "detection": {"mode": "period"}}`:                         "is required in period mode",
		`{"name": "x", "detection": {"mode": "auto", "extra": 1}}`:               "unknown field detection.extra",
	} {
		r := e.do(e.keyA, "POST", "/api/v1/beets", body)
		if !strings.Contains(string(r.body), want) {
			t.Errorf("%s: %d %s, want a message saying %q", body, r.status, r.body, want)
		}
	}
}

// Paging back with the answer's next visits every event once, also when
// many share one microsecond (until alone skipped the rest of it), and
// received_at always has six digits of microseconds.
func TestEventsPageBackThroughOneMicrosecond(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "Batch"})
	at := time.Date(2026, 12, 4, 11, 32, 21, 117720000, time.UTC)
	var evs []beet.Event
	for i := range 7 {
		id := beet.EventID{byte(i * 37), 1, 2, 3}
		evs = append(evs, beet.Event{ID: id, BeetID: b.ID, ReceivedAt: at, Method: "POST", UserAgent: "curl/8"})
	}
	if err := e.store.AddEvents(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/beets/%d/events?limit=3", b.ID)
	seen := map[string]bool{}
	for q := path; q != ""; {
		r := e.do(e.keyA, "GET", q, nil)
		var p struct {
			Events []struct {
				ID         string `json:"id"`
				ReceivedAt string `json:"received_at"`
			}
			Next *struct {
				Until    string `json:"until"`
				BeforeID string `json:"before_id"`
			}
		}
		r.json(t, &p)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", q, r.status, r.body)
		}
		for _, ev := range p.Events {
			if seen[ev.ID] || ev.ReceivedAt != "2026-12-04T11:32:21.117720Z" {
				t.Errorf("event %s at %q (seen before: %v)", ev.ID, ev.ReceivedAt, seen[ev.ID])
			}
			seen[ev.ID] = true
		}
		q = ""
		if p.Next != nil {
			q = path + "&until=" + p.Next.Until + "&before_id=" + p.Next.BeforeID
		}
	}
	if len(seen) != 7 {
		t.Errorf("paging back saw %d of 7 events", len(seen))
	}
	for _, q := range []string{"&before_id=nope&until=2026-12-05T00:00:00Z", "&before_id=" + evs[0].ID.String()} {
		if r := e.do(e.keyA, "GET", path+q, nil); r.status != 422 {
			t.Errorf("%s: %d %s, want 422", q, r.status, r.body)
		} else if _, field := r.errorCode(t); field != "before_id" {
			t.Errorf("%s: field %q, want before_id", q, field)
		}
	}
}
