package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

type taggedOut struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Timezone string   `json:"timezone"`
	Tags     []string `json:"tags"`
}

// A beet's tags are read and written through the API: given at creation,
// replaced by PATCH, shown on every beet (as [] when none), and the list
// filters by one. A bad tag is a 422 naming the field, and changes nothing.
func TestBeetTags(t *testing.T) {
	e := newEnv(t)
	r := e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "Backup", "tags": []string{"Prod", "billing", "prod"}})
	var b taggedOut
	r.json(t, &b)
	if r.status != http.StatusCreated || !slices.Equal(b.Tags, []string{"billing", "prod"}) {
		t.Fatalf("create with tags: %d %s", r.status, r.body)
	}
	var plain taggedOut
	e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "Untagged"}).json(t, &plain)
	if plain.Tags == nil || len(plain.Tags) != 0 {
		t.Errorf("a beet without tags shows %v, want []", plain.Tags)
	}

	path := fmt.Sprintf("/api/v1/beets/%d", b.ID)
	var got taggedOut
	e.do(e.keyA, "GET", path, nil).json(t, &got)
	if !slices.Equal(got.Tags, []string{"billing", "prod"}) {
		t.Errorf("GET shows tags %v", got.Tags)
	}

	// Refused whole: a bad tag leaves the name and the tags as they were.
	for _, bad := range []any{[]string{"has space"}, []string{"ünïcode"}, []string{""}, []string{"a,b"},
		[]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}} {
		r = e.do(e.keyA, "PATCH", path, map[string]any{"name": "Renamed", "tags": bad})
		if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "tags" {
			t.Errorf("PATCH tags %v: %d %s", bad, r.status, r.body)
		}
	}
	r = e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "Refused", "tags": []string{"no way"}})
	if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "tags" {
		t.Errorf("create with a bad tag: %d %s", r.status, r.body)
	}
	e.do(e.keyA, "GET", path, nil).json(t, &got)
	if got.Name != "Backup" || !slices.Equal(got.Tags, []string{"billing", "prod"}) {
		t.Errorf("a refused change changed the beet: %+v", got)
	}

	r = e.do(e.keyA, "PATCH", path, map[string]any{"tags": []string{"nightly"}})
	r.json(t, &got)
	if r.status != 200 || !slices.Equal(got.Tags, []string{"nightly"}) || got.Name != "Backup" {
		t.Fatalf("PATCH tags: %d %s", r.status, r.body)
	}
	e.do(e.keyA, "PATCH", path, map[string]any{"name": "Backup job"}).json(t, &got)
	if !slices.Equal(got.Tags, []string{"nightly"}) {
		t.Errorf("PATCH without tags dropped them: %v", got.Tags)
	}

	var list struct {
		Beets []taggedOut `json:"beets"`
		Total int         `json:"total"`
	}
	e.do(e.keyA, "GET", "/api/v1/beets?tag=NIGHTLY", nil).json(t, &list)
	if list.Total != 1 || len(list.Beets) != 1 || list.Beets[0].ID != b.ID || !slices.Equal(list.Beets[0].Tags, []string{"nightly"}) {
		t.Errorf("?tag=nightly: %+v", list)
	}
	if r := e.do(e.keyA, "GET", "/api/v1/beets?tag=no%20way", nil); r.status != 422 {
		t.Errorf("?tag with a space: %d", r.status)
	}
	// Another account's tag filter finds none of A's beets, and B cannot
	// tag A's beet.
	e.do(e.keyB, "GET", "/api/v1/beets?tag=nightly", nil).json(t, &list)
	if list.Total != 0 {
		t.Errorf("B's ?tag=nightly sees %+v", list)
	}
	if r := e.do(e.keyB, "PATCH", path, map[string]any{"tags": []string{"evil"}}); r.status != 404 {
		t.Errorf("B tags A's beet: %d", r.status)
	}

	e.do(e.keyA, "PATCH", path, map[string]any{"tags": []string{}}).json(t, &got)
	if got.Tags == nil || len(got.Tags) != 0 {
		t.Errorf("tags [] left %v", got.Tags)
	}
}

// The account's zone is read and written through the API; a beet created
// without a zone takes it, and a bad zone is a 422 naming the field.
func TestAccountZone(t *testing.T) {
	e := newEnv(t)
	var acc struct {
		ID       int64  `json:"id"`
		Plan     string `json:"plan"`
		Timezone string `json:"timezone"`
	}
	e.do(e.keyA, "GET", "/api/v1/account", nil).json(t, &acc)
	if acc.Timezone != "UTC" {
		t.Errorf("a new account's zone: %q, want UTC", acc.Timezone)
	}
	r := e.do(e.keyA, "PATCH", "/api/v1/account", map[string]any{"timezone": "Mars/Olympus"})
	if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "timezone" {
		t.Errorf("bad zone: %d %s", r.status, r.body)
	}
	if r := e.do(e.keyA, "PATCH", "/api/v1/account", map[string]any{"plan": "enterprise"}); r.status != 400 {
		t.Errorf("PATCH plan (not a setting of the API): %d %s", r.status, r.body)
	}
	r = e.do(e.keyA, "PATCH", "/api/v1/account", map[string]any{"timezone": "Europe/Riga"})
	r.json(t, &acc)
	if r.status != 200 || acc.Timezone != "Europe/Riga" || acc.Plan != "free" {
		t.Fatalf("PATCH zone: %d %s", r.status, r.body)
	}
	e.do(e.keyA, "GET", "/api/v1/account", nil).json(t, &acc)
	if acc.Timezone != "Europe/Riga" {
		t.Errorf("zone after PATCH: %q", acc.Timezone)
	}
	var b taggedOut
	e.do(e.keyA, "POST", "/api/v1/beets", map[string]any{"name": "Cron job", "detection": map[string]any{"mode": "cron", "cron": "0 2 * * *"}}).json(t, &b)
	if b.Timezone != "Europe/Riga" {
		t.Errorf("a beet created without a zone: %q, want the account's", b.Timezone)
	}
	// B's account keeps its own zone.
	e.do(e.keyB, "GET", "/api/v1/account", nil).json(t, &acc)
	if acc.Timezone != "UTC" {
		t.Errorf("B's zone after A's change: %q", acc.Timezone)
	}
}
