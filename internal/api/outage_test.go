package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// While PostgreSQL cannot be reached the API answers 503 unavailable with
// a Retry-After, not 500 internal: a client should try again, and nothing
// in the request was wrong. Back once the database is.
func TestDatabaseOutageIsUnavailable(t *testing.T) {
	store, proxy, _ := testdb.PostgresBehindProxy(t)
	svc := service.New(store, service.Options{PasswordParams: cheapHash})
	_, key, err := svc.CreateAccount(context.Background(), "outage@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.New(svc, nil).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := &env{t: t, srv: srv}
	if r := e.do(key, "GET", "/api/v1/beets", nil); r.status != 200 {
		t.Fatalf("before the outage: %d %s", r.status, r.body)
	}
	proxy.Cut()
	for _, req := range []struct{ method, path string }{{"GET", "/api/v1/beets"}, {"POST", "/api/v1/beets"}} {
		var body any
		if req.method == "POST" {
			body = map[string]any{"name": "x"}
		}
		r := e.do(key, req.method, req.path, body)
		if code, _ := r.errorCode(t); r.status != http.StatusServiceUnavailable || code != "unavailable" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s in an outage: %d %s, Retry-After %q; want 503 unavailable with Retry-After", req.method, req.path, r.status, r.body, r.header.Get("Retry-After"))
		}
	}
	proxy.Restore()
	if r := e.do(key, "GET", "/api/v1/beets", nil); r.status != 200 {
		t.Fatalf("after the outage: %d %s", r.status, r.body)
	}
}
