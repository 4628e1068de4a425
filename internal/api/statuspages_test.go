package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type statusPageOut struct {
	ID          int64    `json:"id"`
	Slug        string   `json:"slug"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	BeetIDs     []int64  `json:"beet_ids"`
}

type noticeOut struct {
	ID         int64   `json:"id"`
	Number     int     `json:"number"`
	Title      string  `json:"title"`
	Severity   string  `json:"severity"`
	Resolved   bool    `json:"resolved"`
	ResolvedAt *string `json:"resolved_at"`
}

// TestStatusPagesCRUD: an account creates, lists, reads, changes and
// deletes a page and its notices; resolving a notice stamps it.
func TestStatusPagesCRUD(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "billing"})
	res := e.do(e.keyA, "POST", "/api/v1/status-pages", map[string]any{"slug": "acme", "title": "Acme", "tags": []string{"Prod", "prod", "db"}, "beet_ids": []int64{b.ID}})
	if res.status != http.StatusCreated || res.header.Get("Location") == "" {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	var p statusPageOut
	res.json(t, &p)
	if p.Slug != "acme" || p.Title != "Acme" || fmt.Sprint(p.Tags) != "[prod db]" || fmt.Sprint(p.BeetIDs) != fmt.Sprint([]int64{b.ID}) {
		t.Fatalf("created page = %+v: tags lower-cased and deduplicated in order, beet IDs kept", p)
	}
	path := fmt.Sprintf("/api/v1/status-pages/%d", p.ID)
	var list struct {
		StatusPages []statusPageOut `json:"status_pages"`
	}
	e.do(e.keyA, "GET", "/api/v1/status-pages", nil).json(t, &list)
	if len(list.StatusPages) != 1 || list.StatusPages[0].ID != p.ID {
		t.Fatalf("list = %+v", list)
	}
	res = e.do(e.keyA, "PATCH", path, map[string]any{"title": "Acme Inc", "beet_ids": []int64{}})
	var upd statusPageOut
	res.json(t, &upd)
	if res.status != 200 || upd.Title != "Acme Inc" || upd.Slug != "acme" || len(upd.BeetIDs) != 0 || len(upd.Tags) != 2 {
		t.Fatalf("patch: %d %s", res.status, res.body)
	}

	// A beet the page names is deleted: the page drops it, and a change
	// that does not touch beet_ids is not refused for it.
	gone := e.createBeet(e.keyA, map[string]any{"name": "gone"})
	e.do(e.keyA, "PATCH", path, map[string]any{"beet_ids": []int64{gone.ID}})
	e.do(e.keyA, "DELETE", fmt.Sprintf("/api/v1/beets/%d", gone.ID), nil)
	res = e.do(e.keyA, "PATCH", path, map[string]any{"description": "Our jobs"})
	res.json(t, &upd)
	if res.status != 200 || len(upd.BeetIDs) != 0 || upd.Description != "Our jobs" {
		t.Fatalf("patch after a listed beet was deleted: %d %s", res.status, res.body)
	}

	res = e.do(e.keyA, "POST", path+"/notices", map[string]any{"title": "Slow invoices", "body": "We are on it.", "severity": "minor"})
	var n noticeOut
	res.json(t, &n)
	if res.status != http.StatusCreated || n.Number != 1 || n.Severity != "minor" || n.Resolved {
		t.Fatalf("notice: %d %s", res.status, res.body)
	}
	res = e.do(e.keyA, "POST", path+"/notices", map[string]any{"title": "Second"})
	var n2 noticeOut
	res.json(t, &n2)
	if n2.Number != 2 || n2.Severity != "info" {
		t.Fatalf("second notice: %s: numbered 2, info by default", res.body)
	}
	npath := fmt.Sprintf("%s/notices/%d", path, n.ID)
	res = e.do(e.keyA, "PATCH", npath, map[string]any{"resolved": true})
	res.json(t, &n)
	if res.status != 200 || !n.Resolved || n.ResolvedAt == nil {
		t.Fatalf("resolve: %d %s", res.status, res.body)
	}
	var ns struct{ Notices []noticeOut }
	e.do(e.keyA, "GET", path+"/notices", nil).json(t, &ns)
	if len(ns.Notices) != 2 || ns.Notices[0].Number != 2 || !ns.Notices[1].Resolved {
		t.Fatalf("notices = %+v: newest first, the first resolved", ns.Notices)
	}
	if res := e.do(e.keyA, "DELETE", npath, nil); res.status != http.StatusNoContent {
		t.Fatalf("delete notice: %d %s", res.status, res.body)
	}
	if res := e.do(e.keyA, "DELETE", npath, nil); res.status != http.StatusNotFound {
		t.Fatalf("delete notice twice: %d %s", res.status, res.body)
	}
	if res := e.do(e.keyA, "DELETE", path, nil); res.status != http.StatusNoContent {
		t.Fatalf("delete page: %d %s", res.status, res.body)
	}
	if code, _ := e.do(e.keyA, "GET", path, nil).errorCode(t); code != "not_found" {
		t.Fatalf("deleted page: %s", code)
	}
	if code, _ := e.do(e.keyA, "GET", path+"/notices", nil).errorCode(t); code != "not_found" {
		t.Fatalf("deleted page's notices: %s", code)
	}
}

// TestStatusPagesErrors: every bad input is a JSON error with a stable
// code, the fitting status and the field at fault.
func TestStatusPagesErrors(t *testing.T) {
	e := newEnv(t)
	tooManyTags := make([]string, 21)
	for i := range tooManyTags {
		tooManyTags[i] = fmt.Sprintf("t%d", i)
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"slug with a dot", map[string]any{"slug": "acme.json", "title": "A", "tags": []string{"p"}}, 422, "validation_failed", "slug"},
		{"slug upper case", map[string]any{"slug": "Acme", "title": "A", "tags": []string{"p"}}, 422, "validation_failed", "slug"},
		{"slug too short", map[string]any{"slug": "ab", "title": "A", "tags": []string{"p"}}, 422, "validation_failed", "slug"},
		{"slug too long", map[string]any{"slug": strings.Repeat("a", 41), "title": "A", "tags": []string{"p"}}, 422, "validation_failed", "slug"},
		{"slug ends in a dash", map[string]any{"slug": "acme-", "title": "A", "tags": []string{"p"}}, 422, "validation_failed", "slug"},
		{"no title", map[string]any{"slug": "acme", "tags": []string{"p"}}, 422, "validation_failed", "title"},
		{"title too long", map[string]any{"slug": "acme", "title": strings.Repeat("é", 101), "tags": []string{"p"}}, 422, "validation_failed", "title"},
		{"nothing to show", map[string]any{"slug": "acme", "title": "A"}, 422, "validation_failed", "tags"},
		{"too many tags", map[string]any{"slug": "acme", "title": "A", "tags": tooManyTags}, 422, "validation_failed", "tags"},
		{"bad tag", map[string]any{"slug": "acme", "title": "A", "tags": []string{"a b"}}, 422, "validation_failed", "tags"},
		{"unknown beet", map[string]any{"slug": "acme", "title": "A", "beet_ids": []int64{999999}}, 404, "not_found", "beet_ids"},
		{"unknown field", map[string]any{"slug": "acme", "title": "A", "tags": []string{"p"}, "public": true}, 400, "invalid", "public"},
		{"tags not a list", `{"slug": "acme", "title": "A", "tags": "p"}`, 422, "validation_failed", "tags"},
	}
	for _, c := range cases {
		res := e.do(e.keyA, "POST", "/api/v1/status-pages", c.body)
		code, field := res.errorCode(t)
		if res.status != c.status || code != c.code || field != c.field {
			t.Errorf("%s: %d %s %s, want %d %s %s (%s)", c.name, res.status, code, field, c.status, c.code, c.field, res.body)
		}
	}

	res := e.do(e.keyA, "POST", "/api/v1/status-pages", map[string]any{"slug": "acme", "title": "A", "tags": []string{"p"}})
	var p statusPageOut
	res.json(t, &p)
	if res := e.do(e.keyB, "POST", "/api/v1/status-pages", map[string]any{"slug": "acme", "title": "B", "tags": []string{"p"}}); res.status != 409 {
		t.Errorf("a taken slug: %d %s", res.status, res.body)
	} else if code, field := res.errorCode(t); code != "conflict" || field != "slug" {
		t.Errorf("a taken slug: %s %s", code, field)
	}
	for i := 1; i < 20; i++ {
		if res := e.do(e.keyA, "POST", "/api/v1/status-pages", map[string]any{"slug": fmt.Sprintf("page-%d", i), "title": "A", "tags": []string{"p"}}); res.status != 201 {
			t.Fatalf("page %d: %d %s", i+1, res.status, res.body)
		}
	}
	if res := e.do(e.keyA, "POST", "/api/v1/status-pages", map[string]any{"slug": "page-21", "title": "A", "tags": []string{"p"}}); res.status != 409 {
		t.Errorf("21st page: %d %s, want 409", res.status, res.body)
	}

	path := fmt.Sprintf("/api/v1/status-pages/%d", p.ID)
	noticeCases := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"no title", map[string]any{"body": "x"}, "validation_failed", "title"},
		{"bad severity", map[string]any{"title": "x", "severity": "critical"}, "validation_failed", "severity"},
		{"body too long", map[string]any{"title": "x", "body": strings.Repeat("x", 5001)}, "validation_failed", "body"},
		{"born resolved", map[string]any{"title": "x", "resolved": true}, "validation_failed", "resolved"},
	}
	for _, c := range noticeCases {
		res := e.do(e.keyA, "POST", path+"/notices", c.body)
		if code, field := res.errorCode(t); code != c.code || field != c.field {
			t.Errorf("notice %s: %d %s %s, want %s %s", c.name, res.status, code, field, c.code, c.field)
		}
	}
	for i := 0; i < 100; i++ {
		if res := e.do(e.keyA, "POST", path+"/notices", map[string]any{"title": fmt.Sprint("n", i)}); res.status != 201 {
			t.Fatalf("notice %d: %d %s", i+1, res.status, res.body)
		}
	}
	if res := e.do(e.keyA, "POST", path+"/notices", map[string]any{"title": "one too many"}); res.status != 409 {
		t.Errorf("101st notice: %d %s, want 409", res.status, res.body)
	}
	if code, _ := e.do(e.keyA, "PATCH", path+"/notices/abc", map[string]any{"resolved": true}).errorCode(t); code != "not_found" {
		t.Errorf("a notice ID that is no number: %s", code)
	}
	if res := e.do(e.keyA, "PATCH", path, map[string]any{"slug": "page-1"}); res.status != 409 {
		t.Errorf("renaming onto a taken slug: %d %s", res.status, res.body)
	}
}
