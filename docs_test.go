package beet_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPages are the pages a reader of the repository meets: the README and
// every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md", "CHANGELOG.md"}, pages...)
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestDocsStayShort: the README is a quickstart read in minutes, and each
// page under docs/ says how things are now, not how they got there (git and
// CHANGELOG.md keep that), so none grows into a log.
func TestDocsStayShort(t *testing.T) {
	if n := lineCount(t, "README.md"); n > 250 {
		t.Errorf("README.md has %d lines; keep it a quickstart of at most 250 and move the rest under docs/", n)
	}
	pages, _ := filepath.Glob("docs/*.md")
	if len(pages) < 5 {
		t.Fatalf("found %d pages under docs/", len(pages))
	}
	for _, p := range pages {
		if n := lineCount(t, p); n > 600 {
			t.Errorf("%s has %d lines, over 600: keep the present and the latest figure of each measurement", p, n)
		}
	}
}

// mdLink is a Markdown link or image target, or an HTML src attribute.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)|src="([^"]+)"`)

// TestDocsLinksResolve: every relative link in the README and under docs/
// names a file or folder of the repository, so moving a page or an image
// cannot leave a reader at a dead link.
func TestDocsLinksResolve(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1] + m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			path := filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d links; the pattern is not finding them", checked)
	}
}

// TestReadmeTestCommandIsCIs: the command the README gives to run the
// tests is the one CI runs (with -race and -count there).
func TestReadmeTestCommandIsCIs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```sh\ngo test ./...\n```") {
		t.Error("README.md does not give `go test ./...` as the test command")
	}
	if !regexp.MustCompile(`(?m)^go test( -[a-z]+(=\S+)?)* \./\.\.\.$`).Match(ci) {
		t.Error(".ci/run does not run go test ./..., the README's test command")
	}
}
