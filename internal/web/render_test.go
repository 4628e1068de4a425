package web

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// A template that fails half-way gives a whole 500 page, never the half
// it had written.
func TestRenderErrorIsA500Page(t *testing.T) {
	h, err := New(Options{Service: service.New(testdb.New(t, "sqlite"), service.Options{}), BaseURL: "http://localhost"})
	if err != nil {
		t.Fatal(err)
	}
	base := h.pages["error"]
	broken, err := template.Must(base.Clone()).Parse(`{{define "content"}}<p>half of the page</p>{{.NoSuchField}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	h.pages["broken"] = broken
	rec := httptest.NewRecorder()
	h.render(rec, httptest.NewRequest("GET", "/", nil), http.StatusOK, "broken", layoutView{Title: "x"})
	body := rec.Body.String()
	if rec.Code != http.StatusInternalServerError || strings.Contains(body, "half of the page") ||
		!strings.Contains(body, "Something went wrong on our side") || strings.Count(body, "<html") != 1 {
		t.Fatalf("broken template: %d\n%s", rec.Code, body)
	}
}

// Every page template parses at start, and the pages the handlers name exist.
func TestTemplatesParsed(t *testing.T) {
	h, err := New(Options{Service: service.New(testdb.New(t, "sqlite"), service.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"error", "setup", "login", "signup", "beets", "beet_new", "beet", "confirm", "account", "channel", "channel_new", "maintenance_new"} {
		if h.pages[p] == nil {
			t.Errorf("no page template %q", p)
		}
	}
}
