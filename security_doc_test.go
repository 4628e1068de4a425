package beet_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestThreatModelNamesRealTests: every attack in docs/SECURITY.md's table
// names at least one test, and every Test… and Fuzz… name in the document
// is a function of some _test.go file, so a renamed or deleted test
// cannot leave the threat model pointing at nothing.
func TestThreatModelNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllSubmatch(b, -1) {
				funcs[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")
	for _, m := range name.FindAllStringSubmatch(string(doc), -1) {
		if !funcs[m[1]] {
			t.Errorf("docs/SECURITY.md names %s, which is no test function", m[1])
		}
	}

	// The attacks table: from its heading to the next section.
	_, table, ok := strings.Cut(string(doc), "## Attacks considered and the test for each")
	table, _, _ = strings.Cut(table, "\n## ")
	if !ok {
		t.Fatal("docs/SECURITY.md has no attacks table")
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| attack ") {
			continue
		}
		rows++
		cells := strings.Split(line, " | ")
		if last := cells[len(cells)-1]; !name.MatchString(last) {
			t.Errorf("attack %q names no test in its last column", strings.TrimPrefix(cells[0], "| "))
		}
	}
	if rows < 10 {
		t.Errorf("the attacks table has %d rows; expected the threat model's", rows)
	}
}
