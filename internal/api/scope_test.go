package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestReadOnlyKeyEveryRoute walks the API's own route table with a
// read-only key of the account that owns every object named: each route
// whose method is not GET answers 403 forbidden and changes nothing, each
// GET route answers as it does for a read-write key. A new route is in
// the table, so it cannot be missed. The same writes with the account's
// read-write key then succeed, so the 403 is the key's scope and nothing
// else. Both engines.
func TestReadOnlyKeyEveryRoute(t *testing.T) { testdb.Each(t, testReadOnlyKeyEveryRoute) }

func testReadOnlyKeyEveryRoute(t *testing.T, engine string) {
	ctx := context.Background()
	db := testdb.New(t, engine)
	svc := service.New(db, service.Options{PasswordParams: cheapHash})
	a, rwKey, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	roStored, roKey, err := svc.CreateScopedAPIKey(ctx, a.ID, "grafana", true)
	if err != nil || !roStored.ReadOnly {
		t.Fatalf("CreateScopedAPIKey = %+v, %v", roStored, err)
	}
	bt, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "nightly backup"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.CreateChannel(ctx, a.ID, service.ChannelInput{Kind: beet.ChannelWebhook, Name: "ops hook",
		Config: beet.ChannelConfig{URL: "https://hooks.example.com/ops"}})
	if err != nil {
		t.Fatal(err)
	}
	start, end := time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)
	mw := &beet.MaintenanceWindow{BeetID: bt.ID, Start: &start, End: &end, Note: "upgrade"}
	if err := svc.CreateMaintenance(ctx, a.ID, mw); err != nil {
		t.Fatal(err)
	}
	page := &beet.StatusPage{Slug: "ro-page", Title: "Status", Tags: []string{"prod"}}
	if err := svc.CreateStatusPage(ctx, a.ID, page); err != nil {
		t.Fatal(err)
	}
	notice := &beet.StatusNotice{Title: "news"}
	if err := svc.CreateStatusNotice(ctx, a.ID, page.ID, notice); err != nil {
		t.Fatal(err)
	}
	h := api.New(svc, nil)
	mux := http.NewServeMux()
	h.Register(mux)

	path := func(pattern string) string {
		var id int64
		switch {
		case !strings.Contains(pattern, "{id}"):
			return pattern
		case strings.HasPrefix(pattern, "/api/v1/beets/"):
			id = bt.ID
		case strings.HasPrefix(pattern, "/api/v1/channels/"):
			id = ch.ID
		case strings.HasPrefix(pattern, "/api/v1/maintenance/"):
			id = mw.ID
		case strings.HasPrefix(pattern, "/api/v1/status-pages/"):
			id = page.ID
		default:
			t.Fatalf("%s: no object of the account for its {id}", pattern)
		}
		pattern = strings.Replace(pattern, "{notice}", strconv.FormatInt(notice.ID, 10), 1)
		return strings.Replace(pattern, "{id}", strconv.FormatInt(id, 10), 1)
	}
	call := func(key, route string) *httptest.ResponseRecorder {
		method, pattern, _ := strings.Cut(route, " ")
		body := apiIsolation[route].body // a valid body for the call, shared with the isolation table
		req := httptest.NewRequest(method, path(pattern), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	var reads, writes []string
	for _, p := range h.Patterns() {
		if strings.HasPrefix(p, "GET ") {
			reads = append(reads, p)
		} else {
			writes = append(writes, p)
		}
	}
	if len(reads) < 10 || len(writes) < 10 {
		t.Fatalf("the route table has %d reads and %d writes; expected the whole API", len(reads), len(writes))
	}
	for _, p := range writes {
		rec := call(roKey, p)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"code":"forbidden"`) {
			t.Errorf("read-only key, %s: %d %s, want 403 forbidden", p, rec.Code, rec.Body.Bytes())
		}
		if strings.Contains(rec.Body.String(), roKey) {
			t.Errorf("read-only key, %s: the refusal shows the whole key", p)
		}
	}
	for _, p := range reads {
		if rec := call(roKey, p); rec.Code != http.StatusOK {
			t.Errorf("read-only key, %s: %d %s, want 200", p, rec.Code, rec.Body.Bytes())
		}
	}

	// Nothing changed: same beet (name, token, not paused), channel, window; no new objects.
	got, err := svc.Beet(ctx, a.ID, bt.ID)
	if err != nil || got.Name != bt.Name || got.Token != bt.Token || got.Status == beet.StatusPaused {
		t.Errorf("the beet after the read-only key's writes: %+v, %v", got, err)
	}
	for _, list := range []struct{ path, want string }{
		{"/api/v1/beets", `"name":"nightly backup"`},
		{"/api/v1/channels", `"name":"ops hook"`},
		{"/api/v1/maintenance", `"note":"upgrade"`},
		{"/api/v1/status-pages", `"slug":"ro-page"`},
		{"/api/v1/status-pages/" + strconv.FormatInt(page.ID, 10) + "/notices", `"resolved":false`},
	} {
		rec := call(roKey, "GET "+list.path)
		if n := strings.Count(rec.Body.String(), `"id":`); !strings.Contains(rec.Body.String(), list.want) || n != 1 {
			t.Errorf("%s after the read-only key's writes (%d objects): %s", list.path, n, rec.Body.Bytes())
		}
	}
	if ds, err := svc.Deliveries(ctx, a.ID, ch.ID, 10); err != nil || len(ds) != 0 {
		t.Errorf("the read-only key's channel test queued deliveries: %v, %v", ds, err)
	}

	// The account's read-write key may do all of it (deletions last, a
	// status page's after its notice's, and the beet's, which takes its
	// maintenance windows along, very last, so every other write finds its
	// object).
	rank := func(p string) int {
		switch {
		case p == "DELETE /api/v1/beets/{id}":
			return 3
		case p == "DELETE /api/v1/status-pages/{id}":
			return 2
		case strings.HasPrefix(p, "DELETE "):
			return 1
		}
		return 0
	}
	sort.SliceStable(writes, func(i, j int) bool { return rank(writes[i]) < rank(writes[j]) })
	for _, p := range writes {
		if rec := call(rwKey, p); rec.Code >= 300 {
			t.Errorf("read-write key, %s: %d %s", p, rec.Code, rec.Body.Bytes())
		}
	}
}

// TestRevokedReadOnlyKey: revoking a read-only key ends its reads too.
func TestRevokedReadOnlyKey(t *testing.T) {
	ctx := context.Background()
	svc := service.New(testdb.New(t, "sqlite"), service.Options{PasswordParams: cheapHash})
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	k, key, err := svc.CreateScopedAPIKey(ctx, a.ID, "", true)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.New(svc, nil).Register(mux)
	get := func() int {
		req := httptest.NewRequest("GET", "/api/v1/beets", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("read-only key before revoking: %d", code)
	}
	if err := svc.RevokeAccountAPIKey(ctx, a.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if code := get(); code != http.StatusUnauthorized {
		t.Errorf("read-only key after revoking: %d, want 401", code)
	}
}

// TestReadOnlyKeySeesNoToken walks every GET path of the OpenAPI document
// with a read-only key of an account with beets, events, flips, problems,
// an old token, a channel and a maintenance window: no answer contains any
// beet's token, live or rotated out, and the beets carry a stable
// unique_key instead (the same for both keys, unchanged by rotation). The
// account's read-write key still reads the tokens. Both engines.
func TestReadOnlyKeySeesNoToken(t *testing.T) { testdb.Each(t, testReadOnlyKeySeesNoToken) }

func testReadOnlyKeySeesNoToken(t *testing.T, engine string) {
	ctx := context.Background()
	db := testdb.New(t, engine)
	svc := service.New(db, service.Options{PasswordParams: cheapHash})
	a, rwKey, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	_, roKey, err := svc.CreateScopedAPIKey(ctx, a.ID, "wall display", true)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	var beets []*beet.Beet
	for _, name := range []string{"nightly backup", "checkout beacon"} {
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		beets = append(beets, b)
		tokens = append(tokens, b.Token)
	}
	bt := beets[0]
	// The first beet's token is rotated out: the old one must not show either.
	newToken, err := svc.RotateToken(ctx, a.ID, bt.ID)
	if err != nil {
		t.Fatal(err)
	}
	tokens = append(tokens, newToken)
	now := time.Now().UTC()
	var events []beet.Event
	for i := range 3 {
		ev := beet.Event{BeetID: bt.ID, Token: newToken, ReceivedAt: now.Add(time.Duration(i-3) * time.Minute), Method: "POST", UserAgent: "cron", Kind: beet.KindPing}
		ev.ID[0], ev.ID[15] = byte(i), 2
		events = append(events, ev)
	}
	if err := db.AddEvents(ctx, events, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.AddProblem(ctx, &beet.Problem{BeetID: bt.ID, At: now, Kind: beet.ProblemBadValue, Detail: `value "x" is not a number`}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Pause(ctx, a.ID, bt.ID); err != nil {
		t.Fatal(err)
	}
	ch, err := svc.CreateChannel(ctx, a.ID, service.ChannelInput{Kind: beet.ChannelWebhook, Name: "ops hook",
		Config: beet.ChannelConfig{URL: "https://hooks.example.com/ops"}})
	if err != nil {
		t.Fatal(err)
	}
	start, end := now.Add(time.Hour), now.Add(2*time.Hour)
	mw := &beet.MaintenanceWindow{BeetID: bt.ID, Start: &start, End: &end, Note: "upgrade"}
	if err := svc.CreateMaintenance(ctx, a.ID, mw); err != nil {
		t.Fatal(err)
	}
	sp := &beet.StatusPage{Slug: "acme-status", Title: "Acme", BeetIDs: []int64{beets[0].ID, beets[1].ID}}
	if err := svc.CreateStatusPage(ctx, a.ID, sp); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateStatusNotice(ctx, a.ID, sp.ID, &beet.StatusNotice{Title: "Slow checkouts", Body: "Looking into it", Severity: beet.SeverityMinor}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.New(svc, nil).Register(mux)
	get := func(key, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}

	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(get("", "/api/v1/openapi.json").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	walked := 0
	for pattern, ops := range doc.Paths {
		if _, ok := ops["get"]; !ok || strings.HasPrefix(pattern, "/api/v1/beet/") || strings.HasPrefix(pattern, "/ping/") {
			continue // ingestion takes the token; it answers a GIF, never JSON
		}
		var ids []int64
		switch {
		case !strings.Contains(pattern, "{id}"):
			ids = []int64{0}
		case strings.HasPrefix(pattern, "/api/v1/beets/"):
			ids = []int64{beets[0].ID, beets[1].ID}
		case strings.HasPrefix(pattern, "/api/v1/channels/"):
			ids = []int64{ch.ID}
		case strings.HasPrefix(pattern, "/api/v1/maintenance/"):
			ids = []int64{mw.ID}
		case strings.HasPrefix(pattern, "/api/v1/status-pages/"):
			ids = []int64{sp.ID}
		default:
			t.Fatalf("%s: no object of the account for its {id}", pattern)
		}
		for _, id := range ids {
			path := strings.Replace(pattern, "{id}", strconv.FormatInt(id, 10), 1)
			rec := get(roKey, path)
			if rec.Code != http.StatusOK {
				t.Errorf("read-only key, GET %s: %d %s", path, rec.Code, rec.Body.Bytes())
			}
			for _, tok := range tokens {
				if strings.Contains(rec.Body.String(), tok) || strings.Contains(rec.Body.String(), tok[len(beet.TokenPrefix):]) {
					t.Errorf("read-only key, GET %s shows a token: %s", path, rec.Body.Bytes())
				}
			}
			walked++
		}
	}
	if walked < 12 {
		t.Fatalf("walked %d GET paths; expected the whole document", walked)
	}

	type beetOut struct {
		ID        int64   `json:"id"`
		Token     *string `json:"token"`
		UniqueKey string  `json:"unique_key"`
	}
	var ro, rw struct{ Beets []beetOut }
	json.Unmarshal(get(roKey, "/api/v1/beets").Body.Bytes(), &ro)
	json.Unmarshal(get(rwKey, "/api/v1/beets").Body.Bytes(), &rw)
	if len(ro.Beets) != 2 || len(rw.Beets) != 2 {
		t.Fatalf("beets: read-only %+v, read-write %+v", ro, rw)
	}
	for i := range ro.Beets {
		if ro.Beets[i].Token != nil {
			t.Errorf("read-only key: beet %d has a token field", ro.Beets[i].ID)
		}
		if len(ro.Beets[i].UniqueKey) != 40 || ro.Beets[i].UniqueKey != rw.Beets[i].UniqueKey || ro.Beets[i].UniqueKey == ro.Beets[1-i].UniqueKey {
			t.Errorf("unique_key: read-only %q, read-write %q", ro.Beets[i].UniqueKey, rw.Beets[i].UniqueKey)
		}
		if rw.Beets[i].Token == nil || !slices.Contains(tokens, *rw.Beets[i].Token) {
			t.Errorf("read-write key: beet %d lacks its token", rw.Beets[i].ID)
		}
	}
	// Stable: the key made at creation, before the rotation, is the one read now.
	if got := beets[0].UniqueKey(); got != ro.Beets[0].UniqueKey {
		t.Errorf("unique_key at creation %q, after rotation %q", got, ro.Beets[0].UniqueKey)
	}
}
