package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// isolation says how a call is checked with account B's key against
// account A: byID calls name one of A's objects in the path and must
// answer 404; own calls name no object and must show none of A's data.
type isolation struct {
	byID bool
	body string // JSON sent with the call
}

// apiIsolation has an entry for every route of the API; a route without
// one fails TestIsolationEveryRoute, so a new route cannot be missed.
var apiIsolation = map[string]isolation{
	"GET /api/v1/account":                   {},
	"PATCH /api/v1/account":                 {body: `{"timezone": "Asia/Tokyo"}`},
	"POST /api/v1/beets":                    {body: `{"name": "b's"}`},
	"GET /api/v1/beets":                     {},
	"GET /api/v1/beets/{id}":                {byID: true},
	"PATCH /api/v1/beets/{id}":              {byID: true, body: `{"name": "taken"}`},
	"DELETE /api/v1/beets/{id}":             {byID: true},
	"POST /api/v1/beets/{id}/rotate-token":  {byID: true},
	"POST /api/v1/beets/{id}/pause":         {byID: true},
	"POST /api/v1/beets/{id}/resume":        {byID: true},
	"GET /api/v1/beets/{id}/events":         {byID: true},
	"GET /api/v1/beets/{id}/flips":          {byID: true},
	"GET /api/v1/beets/{id}/problems":       {byID: true},
	"GET /api/v1/beets/{id}/rotated-tokens": {byID: true},
	"GET /api/v1/incidents":                 {},
	"GET /api/v1/beets/{id}/channels":       {byID: true},
	"PUT /api/v1/beets/{id}/channels":       {byID: true, body: `{"channels": []}`},
	"POST /api/v1/channels":                 {body: `{"kind": "webhook", "name": "b's", "config": {"url": "https://hooks.example.com/b"}}`},
	"GET /api/v1/channels":                  {},
	"GET /api/v1/channels/{id}":             {byID: true},
	"PATCH /api/v1/channels/{id}":           {byID: true, body: `{"name": "taken"}`},
	"DELETE /api/v1/channels/{id}":          {byID: true},
	"POST /api/v1/channels/{id}/test":       {byID: true},
	"GET /api/v1/channels/{id}/deliveries":  {byID: true},
	"POST /api/v1/maintenance":              {body: `{"note": "b's", "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-01T01:00:00Z"}`},
	"GET /api/v1/maintenance":               {},
	"DELETE /api/v1/maintenance/{id}":       {byID: true},

	// Status pages.
	"POST /api/v1/status-pages":                         {body: `{"slug": "b-status", "title": "b's", "tags": ["prod"]}`},
	"GET /api/v1/status-pages":                          {},
	"GET /api/v1/status-pages/{id}":                     {byID: true},
	"PATCH /api/v1/status-pages/{id}":                   {byID: true, body: `{"title": "taken"}`},
	"DELETE /api/v1/status-pages/{id}":                  {byID: true},
	"POST /api/v1/status-pages/{id}/notices":            {byID: true, body: `{"title": "b's notice"}`},
	"GET /api/v1/status-pages/{id}/notices":             {byID: true},
	"PATCH /api/v1/status-pages/{id}/notices/{notice}":  {byID: true, body: `{"resolved": true}`},
	"DELETE /api/v1/status-pages/{id}/notices/{notice}": {byID: true},
}

// TestIsolationEveryRoute walks the API's own route table: account B's
// key against each of account A's objects gets 404 not_found (never 403,
// never A's data), lists and creations show none of A's objects, and A's
// objects are unchanged afterwards. Both engines.
func TestIsolationEveryRoute(t *testing.T) { testdb.Each(t, testIsolationEveryRoute) }

func testIsolationEveryRoute(t *testing.T, engine string) {
	ctx := context.Background()
	db := testdb.New(t, engine)
	svc := service.New(db, service.Options{PasswordParams: cheapHash})
	a, keyA, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	_, keyB, err := svc.CreateAccount(ctx, "b@example.com", "password-b", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	const secretName = "A-secret-name"
	bt, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: secretName, Description: "A-secret-description"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.CreateChannel(ctx, a.ID, service.ChannelInput{Kind: beet.ChannelWebhook, Name: secretName,
		Config: beet.ChannelConfig{URL: "https://hooks.example.com/a-secret-path", Secret: "a-webhook-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	start, end := time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)
	mw := &beet.MaintenanceWindow{BeetID: bt.ID, Start: &start, End: &end, Note: secretName}
	if err := svc.CreateMaintenance(ctx, a.ID, mw); err != nil {
		t.Fatal(err)
	}
	page := &beet.StatusPage{Slug: "a-status", Title: secretName, Description: "A-secret-description", BeetIDs: []int64{bt.ID}}
	if err := svc.CreateStatusPage(ctx, a.ID, page); err != nil {
		t.Fatal(err)
	}
	notice := &beet.StatusNotice{Title: secretName, Body: "A-secret-notice", Severity: beet.SeverityMajor}
	if err := svc.CreateStatusNotice(ctx, a.ID, page.ID, notice); err != nil {
		t.Fatal(err)
	}
	h := api.New(svc, nil)
	mux := http.NewServeMux()
	h.Register(mux)

	secrets := []string{secretName, "A-secret-description", bt.Token, "a-secret-path", "a-webhook-secret", "A-secret-notice", "a-status"}
	idFor := func(pattern string) string {
		switch {
		case strings.HasPrefix(pattern, "/api/v1/beets/"):
			return strconv.FormatInt(bt.ID, 10)
		case strings.HasPrefix(pattern, "/api/v1/channels/"):
			return strconv.FormatInt(ch.ID, 10)
		case strings.HasPrefix(pattern, "/api/v1/maintenance/"):
			return strconv.FormatInt(mw.ID, 10)
		case strings.HasPrefix(pattern, "/api/v1/status-pages/"):
			return strconv.FormatInt(page.ID, 10)
		}
		t.Fatalf("%s: no object of account A for its {id}", pattern)
		return ""
	}
	call := func(key, method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	patterns := h.Patterns()
	if len(patterns) < 20 {
		t.Fatalf("only %d API routes listed", len(patterns))
	}
	for _, p := range patterns {
		c, ok := apiIsolation[p]
		if !ok {
			t.Errorf("route %s has no isolation case: add it to apiIsolation", p)
			continue
		}
		method, pattern, _ := strings.Cut(p, " ")
		path := pattern
		if strings.Contains(pattern, "{id}") {
			path = strings.Replace(pattern, "{id}", idFor(pattern), 1)
		}
		path = strings.Replace(path, "{notice}", strconv.FormatInt(notice.ID, 10), 1)
		rec := call(keyB, method, path, c.body)
		if c.byID && (rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"code":"not_found"`)) {
			t.Errorf("B %s: %d %s, want 404 not_found", p, rec.Code, rec.Body.Bytes())
		}
		if !c.byID && rec.Code >= 400 {
			t.Errorf("B %s on its own account: %d %s", p, rec.Code, rec.Body.Bytes())
		}
		for _, s := range secrets {
			if strings.Contains(rec.Body.String(), s) {
				t.Errorf("B %s: the answer shows A's %q: %s", p, s, rec.Body.Bytes())
			}
		}
	}
	for p := range apiIsolation {
		if !contains(patterns, p) {
			t.Errorf("apiIsolation has %s, which is no route (renamed?)", p)
		}
	}

	// B cannot aim a maintenance window at A's beet either.
	if rec := call(keyB, "POST", "/api/v1/maintenance", `{"beet_id": `+strconv.FormatInt(bt.ID, 10)+`, "starts_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-01T01:00:00Z"}`); rec.Code != http.StatusNotFound {
		t.Errorf("B's maintenance window on A's beet: %d %s, want 404", rec.Code, rec.Body.Bytes())
	}

	// B cannot show A's beet on its own page, nor reach A's notice through
	// its own page, nor take A's slug.
	var bPage struct{ ID int64 }
	rec := call(keyB, "POST", "/api/v1/status-pages", `{"slug": "b-second", "title": "b", "tags": ["x"]}`)
	if err := json.Unmarshal(rec.Body.Bytes(), &bPage); err != nil || bPage.ID == 0 {
		t.Fatalf("B's own page: %d %s", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyB, "PATCH", "/api/v1/status-pages/"+strconv.FormatInt(bPage.ID, 10), `{"beet_ids": [`+strconv.FormatInt(bt.ID, 10)+`]}`); rec.Code != http.StatusNotFound ||
		!strings.Contains(rec.Body.String(), `"field":"beet_ids"`) {
		t.Errorf("B's page showing A's beet: %d %s, want 404 on beet_ids", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyB, "PATCH", "/api/v1/status-pages/"+strconv.FormatInt(bPage.ID, 10)+"/notices/"+strconv.FormatInt(notice.ID, 10), `{"resolved": true}`); rec.Code != http.StatusNotFound {
		t.Errorf("A's notice through B's page: %d %s, want 404", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyB, "PATCH", "/api/v1/status-pages/"+strconv.FormatInt(bPage.ID, 10), `{"slug": "a-status"}`); rec.Code != http.StatusConflict {
		t.Errorf("B taking A's slug: %d %s, want 409", rec.Code, rec.Body.Bytes())
	}

	// A's objects are as they were.
	id := strconv.FormatInt(bt.ID, 10)
	if rec := call(keyA, "GET", "/api/v1/beets/"+id, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), bt.Token) ||
		!strings.Contains(rec.Body.String(), secretName) || strings.Contains(rec.Body.String(), `"status":"paused"`) {
		t.Errorf("A's beet after B's calls: %d %s", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyA, "GET", "/api/v1/channels/"+strconv.FormatInt(ch.ID, 10), ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), secretName) {
		t.Errorf("A's channel after B's calls: %d %s", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyA, "GET", "/api/v1/maintenance", ""); !strings.Contains(rec.Body.String(), secretName) {
		t.Errorf("A's maintenance window after B's calls: %d %s", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyA, "GET", "/api/v1/status-pages/"+strconv.FormatInt(page.ID, 10)+"/notices", ""); rec.Code != 200 ||
		!strings.Contains(rec.Body.String(), "A-secret-notice") || strings.Contains(rec.Body.String(), `"resolved":true`) {
		t.Errorf("A's notice after B's calls: %d %s", rec.Code, rec.Body.Bytes())
	}
	if rec := call(keyA, "GET", "/api/v1/beets/"+id+"/channels", ""); !strings.Contains(rec.Body.String(), strconv.FormatInt(ch.ID, 10)) {
		t.Errorf("A's beet channels after B's calls: %s", rec.Body.Bytes())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
