package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestNamesTrimmedAndBidiRefused: a name pasted with spaces around it is
// stored without them, on create and on change, for beets, channels and
// API keys; a name holding a bidirectional override or isolate (which
// would show it as another, in alerts too) is refused like a control
// character, naming the field.
func TestNamesTrimmedAndBidiRefused(t *testing.T) {
	e := newEnv(t)
	var b struct {
		ID   int64
		Name string
	}
	e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "  Checkout  "}).json(t, &b)
	if b.Name != "Checkout" {
		t.Errorf("created as %q, want \"Checkout\"", b.Name)
	}
	e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/beets/%d", b.ID), map[string]any{"name": "\u00a0Nightly backup  "}).json(t, &b)
	if b.Name != "Nightly backup" {
		t.Errorf("renamed to %q, want \"Nightly backup\"", b.Name)
	}
	var c struct {
		ID   int64
		Name string
	}
	e.do(e.keyA, "POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": " ops hook ",
		"config": map[string]any{"url": "https://hooks.example.com/x"}}).json(t, &c)
	if c.Name != "ops hook" {
		t.Errorf("channel created as %q, want \"ops hook\"", c.Name)
	}
	e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/channels/%d", c.ID), map[string]any{"name": "ops  "}).json(t, &c)
	if c.Name != "ops" {
		t.Errorf("channel renamed to %q, want \"ops\"", c.Name)
	}
	k, _, err := e.svc.CreateAPIKey(t.Context(), e.acctA, " deploy script ")
	if err != nil || k.Name != "deploy script" {
		t.Errorf("API key named %q, %v; want \"deploy script\"", k.Name, err)
	}

	for _, name := range []string{"pay\u202egnp.exe", "a\u2066b\u2069", "\u202dx"} {
		for _, call := range []struct{ method, path string }{{"POST", "/api/v1/beets"}, {"PATCH", fmt.Sprintf("/api/v1/beets/%d", b.ID)}} {
			r := e.do(e.keyA, call.method, call.path, map[string]any{"name": name})
			if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "name" ||
				!strings.Contains(string(r.body), "must not hold bidirectional control characters (found U+") {
				t.Errorf("%s %s with name %q: %d %s, want 422 on name", call.method, call.path, name, r.status, r.body)
			}
		}
	}
}

// TestKeysInTheirCase: a key in another case than the document's is an
// unknown field, as any other, at its path and with the right name;
// encoding/json alone takes {"NAME": …} for "name" and creates the beet.
func TestKeysInTheirCase(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, want  string
	}{
		{"POST", "/api/v1/beets", map[string]any{"NAME": "x"}, "NAME", "name"},
		{"POST", "/api/v1/beets", map[string]any{"name": "x", "Detection": map[string]any{"mode": "auto"}}, "Detection", "detection"},
		{"POST", "/api/v1/beets", map[string]any{"name": "x", "detection": map[string]any{"mode": "period", "Period_Seconds": 3600}}, "detection.Period_Seconds", "period_seconds"},
		{"POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": map[string]any{"URL": "https://hooks.example.com/x"}}, "config.URL", "url"},
	} {
		r := e.do(e.keyA, c.method, c.path, c.body)
		if code, field := r.errorCode(t); r.status != 400 || code != "invalid" || field != c.field ||
			!strings.Contains(string(r.body), "unknown field "+c.field+" (did you mean "+c.want+"?)") {
			t.Errorf("%s %s %v: %d %s, want 400 invalid on %s", c.method, c.path, c.body, r.status, r.body, c.field)
		}
	}
	var list struct{ Beets []json.RawMessage }
	e.do(e.keyA, "GET", "/api/v1/beets", nil).json(t, &list)
	if len(list.Beets) != 0 {
		t.Errorf("%d beets created from bodies in the wrong case", len(list.Beets))
	}
	// The documented case still works.
	if r := e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "x", "detection": map[string]any{"mode": "period", "period_seconds": 3600}}); r.status != 201 {
		t.Errorf("a body in the documented case: %d %s", r.status, r.body)
	}
}
