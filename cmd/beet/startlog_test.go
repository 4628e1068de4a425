package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartUpLogEndsWithWhereToGo runs `beet serve` at the default log
// level on a new SQLite file and reads its log: the setup page's URL is
// the last start-up line, after at most 8 others; a page view writes one
// line, and its stylesheet, script, icon and a health probe none. With an
// account, the last start-up line is the listening line with the sign-in
// URL.
func TestStartUpLogEndsWithWhereToGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	dir := t.TempDir()
	env := []string{"BEET_DATABASE_URL=sqlite://" + filepath.Join(dir, "beet.db"), "BEET_METRICS_LISTEN=127.0.0.1:0"}

	// startUp is the log up to the first request line, once want is in it.
	startUp := func(p *serveProc, want string) []string {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.logs.String(), want); {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", want, p.logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		log, _, _ := strings.Cut(p.logs.String(), "msg=request")
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if strings.Contains(p.logs.String(), "msg=request") {
			lines = lines[:len(lines)-1] // the request line's own start
		}
		return lines
	}

	first := spawn(t, env)
	for _, path := range []string{"/setup", "/static/app.css", "/static/app.js", "/static/favicon.svg", "/favicon.ico", "/healthz", "/readyz"} {
		res, err := http.Get(first.url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	lines := startUp(first, "open the setup page")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `msg="no account yet: open the setup page to create the first one" url=http://`) || !strings.HasSuffix(last, "/setup") {
		t.Errorf("the last start-up line is %q, want the setup page's URL\n%s", last, first.logs.String())
	}
	if len(lines) > 9 {
		t.Errorf("%d start-up lines before the setup URL, want at most 8:\n%s", len(lines)-1, strings.Join(lines, "\n"))
	}
	// The page view's one line comes once the response is written; wait for it.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(first.logs.String(), "path=/setup"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no request line for /setup:\n%s", first.logs.String())
		}
	}
	if n := strings.Count(first.logs.String(), "msg=request"); n != 1 {
		t.Errorf("%d request lines for a page, its assets and two health probes; want 1 (the page):\n%s", n, first.logs.String())
	}

	cliAccount(t, env, "ada@example.com")
	first.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-first.done; err != nil {
		t.Fatalf("first serve: %v", err)
	}
	second := spawn(t, env)
	lines = startUp(second, "msg=listening")
	last = lines[len(lines)-1]
	if !strings.Contains(last, "msg=listening ") || !strings.Contains(last, " sign_in=http://") || !strings.HasSuffix(last, "/login") {
		t.Errorf("with an account, the last start-up line is %q, want the listening line with the sign-in URL\n%s", last, second.logs.String())
	}
	if len(lines) > 9 {
		t.Errorf("%d start-up lines before the listening line, want at most 8:\n%s", len(lines)-1, strings.Join(lines, "\n"))
	}
}
