package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/beethq/beet"
)

// TestOpenAPIMatchesRoutes keeps the document true: every registered call
// is documented, and every documented call is registered and answers.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		if strings.HasPrefix(path, "/api/v1/beet/") {
			continue // ingestion: served by internal/ingest, documented here for clients
		}
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	registered := map[string]bool{"GET /api/v1/openapi.json": true}
	for _, rt := range (&Handler{}).routes() {
		registered[rt.method+" "+rt.pattern] = true
	}
	var missing, extra []string
	for k := range registered {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !registered[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes not in openapi.json: %v; documented but not routed: %v", missing, extra)
	}

	// Every documented call reaches a handler (401 without a key), not the
	// catch-all 404 or 405.
	mux := http.NewServeMux()
	New(nil, nil).Register(mux)
	for k := range documented {
		method, path, _ := strings.Cut(k, " ")
		req := httptest.NewRequest(method, strings.ReplaceAll(path, "{id}", "1"), nil)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if want := map[bool]int{true: 200, false: 401}[path == "/api/v1/openapi.json"]; rec.Code != want {
			t.Errorf("%s: status %d, want %d", k, rec.Code, want)
		}
	}
}

// TestOpenAPIDocumentsReadOnlyRefusal: every call a read-only key is
// refused (each route whose method is not GET) documents its 403.
func TestOpenAPIDocumentsReadOnlyRefusal(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for _, rt := range (&Handler{}).routes() {
		if rt.method == "GET" {
			continue
		}
		var op struct{ Responses map[string]json.RawMessage }
		if err := json.Unmarshal(doc.Paths[rt.pattern][strings.ToLower(rt.method)], &op); err != nil {
			t.Fatalf("%s %s: %v", rt.method, rt.pattern, err)
		}
		if _, ok := op.Responses["403"]; !ok {
			t.Errorf("%s %s: openapi.json has no 403 (read-only key)", rt.method, rt.pattern)
		}
	}
}

// TestOpenAPIChannelKinds: the document lists exactly the channel kinds
// the domain knows, where a channel is read and where one is created.
func TestOpenAPIChannelKinds(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string
				}
			}
		}
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range beet.ChannelKinds {
		want = append(want, string(k))
	}
	for _, schema := range []string{"Channel", "ChannelCreate"} {
		if got := doc.Components.Schemas[schema].Properties["kind"].Enum; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s.kind enum = %v, want %v", schema, got, want)
		}
	}
}
