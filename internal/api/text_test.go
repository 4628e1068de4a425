package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/beethq/beet/internal/testdb"
)

// A NUL in a name is refused the same way on both engines: PostgreSQL's
// text cannot hold it (it answered 500), and SQLite stored it. Line breaks
// are refused in names, kept in descriptions.
func TestControlCharactersRefusedOnEveryEngine(t *testing.T) {
	for _, engine := range testdb.Engines {
		t.Run(engine, func(t *testing.T) {
			e := newEnvOn(t, engine)
			cases := []struct {
				path  string
				body  string
				field string
			}{
				{"/api/v1/beets", `{"name": "nul\u0000x"}`, "name"},
				{"/api/v1/beets", `{"name": "two\nlines"}`, "name"},
				{"/api/v1/beets", `{"name": "x", "description": "nul\u0000x"}`, "description"},
				{"/api/v1/beets", `{"name": "bell\u0007"}`, "name"},
				{"/api/v1/channels", `{"kind": "webhook", "name": "nul\u0000x", "config": {"url": "https://example.com/x"}}`, "name"},
			}
			for _, c := range cases {
				r := e.do(e.keyA, "POST", c.path, c.body)
				if r.status != http.StatusUnprocessableEntity {
					t.Fatalf("POST %s %s: %d %s, want 422", c.path, c.body, r.status, r.body)
				}
				if code, field := r.errorCode(t); code != "validation_failed" || field != c.field {
					t.Errorf("POST %s %s: code %q field %q, want validation_failed on %q", c.path, c.body, code, field, c.field)
				}
			}
			for _, path := range []string{"/api/v1/beets", "/api/v1/channels"} {
				if r := e.do(e.keyA, "GET", path, nil); r.status != 200 || strings.Contains(string(r.body), "nul") {
					t.Errorf("GET %s after refusals: %d %s", path, r.status, r.body)
				}
			}
			b := e.createBeet(e.keyA, map[string]any{"name": "Nightly backup", "description": "Runs at 02:00.\n\tThen uploads."})
			if b.Description != "Runs at 02:00.\n\tThen uploads." {
				t.Errorf("description with a line break and a tab came back as %q", b.Description)
			}
		})
	}
}
