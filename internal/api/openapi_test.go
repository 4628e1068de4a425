package api

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
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
	documented, ingestion := map[string]bool{}, map[string]bool{}
	for path, ops := range doc.Paths {
		if prefix, ok := ingest.Route(path); ok {
			ingestion[prefix+strings.TrimPrefix(strings.TrimPrefix(path, ingest.Prefix), ingest.PingPrefix)] = true
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
	// Ingestion, under both of the prefixes internal/ingest serves: the
	// ping and the signals.
	for _, prefix := range []string{ingest.Prefix, ingest.PingPrefix} {
		for _, p := range []string{"{token}", "{token}/{signal}"} {
			if !ingestion[prefix+p] {
				t.Errorf("%s%s is served by internal/ingest but not documented", prefix, p)
			}
		}
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

// TestOpenAPIEnumsMatchCode: each enum of the document lists exactly the
// string constants the domain declares of its type (read from the source,
// so a new kind added to the code fails here until it is documented): a
// client generated with strict enums must not fail on a real answer.
func TestOpenAPIEnumsMatchCode(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	consts := stringConsts(t, filepath.Join("..", ".."))
	for name, vals := range stringConsts(t, filepath.Join("..", "detect")) {
		consts["detect."+name] = vals
	}
	for _, c := range []struct {
		path   string // under components/schemas
		goType string // in package beet, or detect.X
	}{
		{"Beet/properties/watching/properties/model", "detect.WatchModel"},
		{"Status", "Status"},
		{"Detection/properties/mode", "DetectionMode"},
		{"Account/properties/plan", "Plan"},
		{"Event/properties/kind", "EventKind"},
		{"Flip/properties/kind", "FlipKind"},
		{"Problem/properties/kind", "ProblemKind"},
		{"Channel/properties/kind", "ChannelKind"},
		{"ChannelCreate/properties/kind", "ChannelKind"},
		{"Delivery/properties/status", "DeliveryStatus"},
		{"Notice/properties/severity", "NoticeSeverity"},
		{"NoticeCreate/properties/severity", "NoticeSeverity"},
		{"NoticeUpdate/properties/severity", "NoticeSeverity"},
	} {
		var node any = doc["components"].(map[string]any)["schemas"]
		for _, key := range strings.Split(c.path, "/") {
			m, _ := node.(map[string]any)
			node = m[key]
		}
		m, _ := node.(map[string]any)
		raw, _ := m["enum"].([]any)
		var got []string
		for _, v := range raw {
			got = append(got, v.(string))
		}
		want := consts[c.goType]
		if len(want) == 0 {
			t.Fatalf("no string constants of type beet.%s", c.goType)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("components/schemas/%s enum = %v, the code's %s constants are %v", c.path, got, c.goType, want)
		}
	}
}

// stringConsts reads the package in dir: the values of its string
// constants by their declared type, each list sorted.
func stringConsts(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						out[typ.Name] = append(out[typ.Name], s)
					}
				}
			}
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// TestOpenAPIBodyLimit: the document gives the ingestion body limit the
// service announces in Ping-Body-Limit, and says a longer body is kept cut.
func TestOpenAPIBodyLimit(t *testing.T) {
	var doc struct {
		Paths map[string]struct {
			Post struct{ Description string }
		}
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct{ MaxLength int }
			}
		}
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Schemas["Event"].Properties["message"].MaxLength; got != ingest.MaxBody {
		t.Errorf("Event.message maxLength %d, want the body limit %d", got, ingest.MaxBody)
	}
	limit := strconv.Itoa(ingest.MaxBody/1000) + "," + fmt.Sprintf("%03d", ingest.MaxBody%1000) + " bytes"
	for _, path := range []string{"/api/v1/beet/{token}", "/api/v1/beet/{token}/{signal}", "/ping/{token}", "/ping/{token}/{signal}"} {
		d := doc.Paths[path].Post.Description
		if !strings.Contains(d, "over "+limit) || !strings.Contains(d, "kept, cut to its first "+limit) || strings.Contains(d, "KiB") {
			t.Errorf("POST %s does not say a body over %s is kept cut to it: %q", path, limit, d)
		}
	}
}
