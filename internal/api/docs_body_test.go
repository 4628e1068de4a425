package api_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestDocsSayWhatToSend: every body on the reference lists each of its
// schema's fields with its type and limits and shows an example, and each
// example, sent as it stands with a read-write key, is accepted. The
// prose is rendered (no literal backtick), path parameters are named as
// in the path with their type, and the page links back to the dashboard
// and to where keys are made.
func TestDocsSayWhatToSend(t *testing.T) {
	ctx := context.Background()
	svc := service.New(testdb.New(t, "sqlite"), service.Options{PasswordParams: cheapHash})
	_, key, err := svc.CreateAccount(ctx, "docs@example.com", "password-a", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(svc, nil)
	if err := h.SetBasePath("/beet"); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	call := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	page := call("GET", "/api/v1/docs", "").Body.String()

	if strings.Contains(page, "`") {
		t.Errorf("the reference shows a literal backtick: %q", page[max(0, strings.Index(page, "`")-80):strings.Index(page, "`")+20])
	}
	if !strings.Contains(page, "<code>Authorization: Bearer bk_…</code>") {
		t.Error("the reference does not render the document's code spans")
	}
	for _, link := range []string{`href="/beet/">← Beet dashboard</a>`, `href="/beet/account#keys"`} {
		if !strings.Contains(page, link) {
			t.Errorf("the reference has no link %s", link)
		}
	}
	if strings.Contains(page, "BeetID") || !strings.Contains(page, "<dt><code>id</code> <small>(path, integer, required)</small></dt><dd>The beet&#39;s ID") {
		t.Error("the beet's path parameter is not named id with its type and meaning")
	}
	if !strings.Contains(page, "<dt><code>limit</code> <small>(query, integer, 1 to 1000; default 100)</small></dt>") {
		t.Error("the limit parameter does not say its type and bounds")
	}

	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(call("GET", "/api/v1/openapi.json", "").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	articles := map[string]string{} // "POST /api/v1/beets" → its article
	head := regexp.MustCompile(`<span class="m m-\w+">(\w+)</span> <code>([^<]+)</code>`)
	for _, a := range strings.Split(page, `<article class="op">`)[1:] {
		if m := head.FindStringSubmatch(a); m != nil {
			articles[m[1]+" "+m[2]] = a
		}
	}
	example := regexp.MustCompile(`(?s)<p class="ex">Example:</p><pre><code>(.*?)</code></pre>`)
	// Sent in this order, so each finds what it names: beet 1, channel 1,
	// status page 1 and its notice 1.
	order := []string{"PATCH /api/v1/account", "POST /api/v1/beets", "PATCH /api/v1/beets/{id}", "POST /api/v1/channels",
		"PATCH /api/v1/channels/{id}", "PUT /api/v1/beets/{id}/channels", "POST /api/v1/maintenance",
		"POST /api/v1/status-pages", "PATCH /api/v1/status-pages/{id}", "POST /api/v1/status-pages/{id}/notices",
		"PATCH /api/v1/status-pages/{id}/notices/{notice}"}
	var bodies []string
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				RequestBody *struct {
					Content map[string]struct {
						Schema struct {
							Ref string `json:"$ref"`
						}
					}
				}
			}
			if method == "parameters" || json.Unmarshal(raw, &op) != nil || op.RequestBody == nil || strings.HasPrefix(path, "/api/v1/beet/") || strings.HasPrefix(path, "/ping/") {
				continue
			}
			route := strings.ToUpper(method) + " " + path
			bodies = append(bodies, route)
			a := articles[route]
			ref := op.RequestBody.Content["application/json"].Schema.Ref
			schema := doc.Components.Schemas[ref[strings.LastIndex(ref, "/")+1:]]
			if len(schema.Properties) == 0 {
				t.Errorf("%s: its body %s has no fields in the document", route, ref)
			}
			for name := range schema.Properties {
				if !regexp.MustCompile(`<tr><td><code>` + regexp.QuoteMeta(name) + `</code>( <small class="req">required</small>)?</td><td>[a-z]`).MatchString(a) {
					t.Errorf("%s: the field %s is not listed with its type", route, name)
				}
			}
			if !example.MatchString(a) {
				t.Errorf("%s: no example body", route)
			}
		}
	}
	slices.Sort(bodies)
	sorted := slices.Clone(order)
	slices.Sort(sorted)
	if !slices.Equal(bodies, sorted) {
		t.Fatalf("calls with a body %v; the test sends %v", bodies, order)
	}
	if !strings.Contains(articles["POST /api/v1/beets"], "<td>1 to 200 characters</td>") ||
		!strings.Contains(articles["POST /api/v1/beets"], "<td><code>detection.period_seconds</code></td><td>integer</td><td>60 to 31536000</td>") {
		t.Error("the beet's body does not say its limits")
	}
	for _, route := range order {
		m := example.FindStringSubmatch(articles[route])
		if m == nil {
			continue
		}
		method, path, _ := strings.Cut(route, " ")
		rec := call(method, strings.NewReplacer("{id}", "1", "{notice}", "1").Replace(path), html.UnescapeString(m[1]))
		if rec.Code >= 300 {
			t.Errorf("%s with the reference's example: %d %s", route, rec.Code, rec.Body.Bytes())
		}
	}
}
