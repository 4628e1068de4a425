package ingest

import (
	"testing"

	"github.com/beethq/beet"
)

func TestRunID(t *testing.T) {
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	for _, c := range []struct {
		query, rid string
		ok         bool
	}{
		{"", "", true},
		{"t=123", "", true},
		{"rid=" + id, id, true},
		{"t=1&rid=" + id + "&create=1", id, true},
		{"rid=0F8FAD5B-D9CB-469F-A165-70867728950E", id, true},
		{"rid=0f8fad5bd9cb469fa16570867728950e", id, true},
		{"rid=%7B" + id + "%7D", id, true},
		{"rid=urn:uuid:" + id, id, true},
		{"rid=", "", false},
		{"rid=12", "", false},
		{"rid=" + id + "0", "", false},
		{"rid=0f8fad5b-d9cb-469f-a165-70867728950g", "", false},
		{"rid=0f8fad5bd-9cb-469f-a165-70867728950e", "", false},
		{"rid=%zz", "", false},
		{"grid=" + id, "", true},
	} {
		rid, ok := runID(c.query)
		if rid != c.rid || ok != c.ok {
			t.Errorf("runID(%q) = %q, %v; want %q, %v", c.query, rid, ok, c.rid, c.ok)
		}
	}
}

// FuzzRunID: any query gives either no run ID or one canonical UUID.
func FuzzRunID(f *testing.F) {
	for _, s := range []string{"", "rid=0f8fad5b-d9cb-469f-a165-70867728950e", "rid=0F8FAD5BD9CB469FA16570867728950E", "a=1&rid=%7Bx%7D", "rid=urn:uuid:", "rid"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		rid, ok := runID(q)
		if rid != "" && (!ok || !beet.IsUUIDToken(rid)) {
			t.Fatalf("runID(%q) = %q, %v", q, rid, ok)
		}
		if !ok && rid != "" {
			t.Fatalf("runID(%q) refused but gave %q", q, rid)
		}
	})
}
