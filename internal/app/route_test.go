package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/beethq/beet/internal/ingest"
)

// ingestFirst routes every request as the mux alone does: the ingestion
// handler gets exactly the paths the mux gives it, with the same route for
// the metrics, and the mux still cleans (redirects) odd paths.
func TestIngestFirstRoutesAsTheMux(t *testing.T) {
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Handler", name)
			w.Header().Set("X-Route", r.Pattern)
		})
	}
	mux := http.NewServeMux()
	mux.Handle(ingest.Prefix, handler("ingest"))
	mux.Handle(ingest.PingPrefix, handler("ingest"))
	mux.Handle("GET /api/v1/beets/{id}", handler("api"))
	mux.Handle("/", handler("web"))
	routed := ingestFirst(handler("ingest"), mux)
	for _, path := range []string{
		"/api/v1/beet/bt_abc", "/api/v1/beet/bt_abc/start", "/api/v1/beet/bt_abc/", "/api/v1/beet/",
		"/api/v1/beet/../beets/1", "/api/v1/beet//bt_abc", "/api/v1/beet/./bt_abc", "/api/v1/beet/bt_abc/..",
		"/api/v1/beet/bt%2Fabc", "/api/v1/beet%2Fbt_abc", "/api/v1/beetx", "/api/v1/beets/1", "/",
		"/ping/31365bce-8da9-4729-8ff3-aaa71d56b712", "/ping/31365bce-8da9-4729-8ff3-aaa71d56b712/0", "/ping/", "/ping",
		"/ping//x", "/ping/../api/v1/beets/1", "/pingx",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodHead, http.MethodOptions} {
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			mux.ServeHTTP(want, httptest.NewRequest(method, path, nil))
			routed.ServeHTTP(got, httptest.NewRequest(method, path, nil))
			for _, h := range []string{"X-Handler", "X-Route", "Location"} {
				if got.Code != want.Code || got.Header().Get(h) != want.Header().Get(h) {
					t.Errorf("%s %s: %d %s %q through ingestFirst, %d %q through the mux", method, path,
						got.Code, h, got.Header().Get(h), want.Code, want.Header().Get(h))
				}
			}
		}
	}
}
