package beet_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestLayout enforces the import rules that make the folders show the
// architecture: the domain imports only the standard library, and the
// adapters at the edge never import one another (only internal/app, the
// composition root, and cmd/beet see them all).
func TestLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	const mod = "github.com/beethq/beet"
	adapters := map[string]bool{
		mod + "/internal/sqlstore": true, mod + "/internal/ingest": true, mod + "/internal/api": true,
		mod + "/internal/ratelimit": true, mod + "/internal/server": true, mod + "/internal/jobs": true,
		mod + "/internal/notify":     true,
		mod + "/internal/web":        true,
		mod + "/internal/statuspage": true,
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		for _, imp := range p.Imports {
			if p.ImportPath == mod && strings.Contains(imp, ".") {
				t.Errorf("the domain package imports %s; it may import only the standard library", imp)
			}
			if adapters[p.ImportPath] && adapters[imp] {
				t.Errorf("%s imports %s: adapters must not import each other", p.ImportPath, imp)
			}
			// What a ping does to its beets is decided in pure code: the
			// domain and the standard library, no storage, no HTTP.
			if p.ImportPath == mod+"/internal/ping" && strings.Contains(imp, ".") && imp != mod {
				t.Errorf("internal/ping imports %s; it may import only the domain and the standard library", imp)
			}
			if p.ImportPath == mod+"/internal/service" && adapters[imp] {
				t.Errorf("the service imports the adapter %s; it may see only the domain interfaces", imp)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list showed %d packages; the test is not looking at the module", seen)
	}
}
