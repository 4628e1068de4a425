package api

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reference page is rendered from the document on the server: every
// documented call is on it, ingestion included, with no script.
func TestDocsRender(t *testing.T) {
	h := New(nil, nil)
	if err := h.SetBasePath("/beet"); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/docs", nil))
	page := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("docs: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, s := range []string{"/api/v1/beet/{token}", "/api/v1/beet/{token}/{signal}", "/ping/{token}", "/ping/{token}/{signal}", "Report a job&#39;s start, failure, message or exit code", "no API key", "Record one event", "optionally with a value", "/api/v1/beets/{id}/rotate-token",
		"/api/v1/channels/{id}/deliveries", `href="/beet/api/v1/openapi.json"`, `href="docs.css"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the reference lacks %q", s)
		}
	}
	if strings.Contains(page, "<script") || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
		t.Error("the reference has a script or no strict CSP")
	}
	for _, rt := range h.routes() {
		if !strings.Contains(page, "<code>"+rt.pattern+"</code>") {
			t.Errorf("%s %s is not on the reference page", rt.method, rt.pattern)
		}
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/docs.css", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") {
		t.Errorf("docs.css: %d", rec.Code)
	}
}

// The README links the reference and the document, so a reader of the
// repository finds them.
func TestReadmeLinksTheReference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"/api/v1/docs", "/api/v1/openapi.json"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("README.md does not mention %s", s)
		}
	}
}
