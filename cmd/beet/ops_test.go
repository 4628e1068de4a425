package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testlog"
)

var adminURL = regexp.MustCompile(`msg="admin listening" url=(http://\S+)/metrics`)

// serveProc is a `beet serve` started by spawn: its public and admin URLs.
type serveProc struct {
	*process
	admin string
}

// spawn starts `beet serve` with env and args and waits for its listening
// line. The process is killed when the test ends.
func spawn(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	bin, err := buildBeet()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{process: &process{cmd: cmd, logs: &testlog.Buffer{}, done: make(chan error, 1)}}
	found := make(chan string, 1)
	admin := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.logs.Write([]byte(line + "\n"))
			if m := listenURL.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
			if m := adminURL.FindStringSubmatch(line); m != nil {
				admin <- m[1]
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("beet serve exited: %v\n%s", err, p.logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("beet serve did not start:\n%s", p.logs.String())
	}
	select {
	case p.admin = <-admin:
	default: // off, or logged before the listening line (it is not)
	}
	return p
}

// runBeet runs a one-off command and returns its stdout, stderr and error.
func runBeet(t *testing.T, env []string, args ...string) (string, string, error) {
	t.Helper()
	bin, err := buildBeet()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// cliAccount creates an account with `beet accounts create` on the
// database env names and returns its first API key.
func cliAccount(t *testing.T, env []string, email string) string {
	t.Helper()
	stdout, stderr, err := runBeet(t, env, "accounts", "create", "--email", email, "--password", "password1", "--plan", "free")
	if err != nil {
		t.Fatalf("accounts create: %v %s", err, stderr)
	}
	var acct struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(stdout), &acct); err != nil || acct.APIKey == "" {
		t.Fatalf("accounts create printed %q: %v", stdout, err)
	}
	return acct.APIKey
}

// TestOneSQLiteFileOneServer: a second `beet serve` on the database a
// first one serves exits at once, naming the file and the first one's PID;
// the commands that write (accounts create, cleanup, migrate) keep working
// beside the server; once the first stops, the second starts.
func TestOneSQLiteFileOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "beet.db")
	env := []string{"BEET_DATABASE_URL=sqlite://" + db, "BEET_METRICS_LISTEN=off", "BEET_CLEANUP_INTERVAL=0"}
	first := spawn(t, env)

	bin, _ := buildBeet()
	second := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	second.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := second.CombinedOutput()
	t.Logf("second serve exited after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if err == nil {
		t.Fatal("a second beet serve on the same SQLite file ran")
	}
	want := fmt.Sprintf("%s is in use by another beet (pid %d)", db, first.cmd.Process.Pid)
	if !strings.Contains(string(out), want) {
		t.Fatalf("second serve said:\n%s\nwant a line with %q", out, want)
	}
	if strings.Contains(string(out), "msg=listening") {
		t.Fatalf("second serve listened before refusing:\n%s", out)
	}

	// A spool on the database file is refused as such, not as a second server.
	_, stderr, err := runBeet(t, []string{"BEET_DATABASE_URL=sqlite://" + filepath.Join(dir, "other.db"), "BEET_SPOOL_PATH=" + filepath.Join(dir, "other.db"),
		"BEET_METRICS_LISTEN=off"}, "serve", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(stderr, "BEET_SPOOL_PATH (--spool-path): is the database file") {
		t.Errorf("spool on the database file: %v\n%s", err, stderr)
	}

	// Writing commands beside the running server.
	stdout, stderr, err := runBeet(t, env, "accounts", "create", "--email", "side@example.com", "--password", "password1", "--plan", "free")
	if err != nil || !strings.Contains(stdout, `"api_key"`) {
		t.Fatalf("accounts create beside serve: %v\n%s%s", err, stdout, stderr)
	}
	if _, stderr, err := runBeet(t, env, "cleanup"); err != nil {
		t.Fatalf("cleanup beside serve: %v\n%s", err, stderr)
	}
	if stdout, stderr, err := runBeet(t, env, "migrate"); err != nil || !strings.Contains(stdout, "current") {
		t.Fatalf("migrate beside serve: %v\n%s%s", err, stdout, stderr)
	}
	// The server sees the account the command made: the setup page is gone.
	res, err := http.Get(first.url + "/setup")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK && res.Request.URL.Path == "/setup" {
		t.Errorf("setup page still offered after accounts create")
	}

	first.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-first.done; err != nil {
		t.Fatalf("first serve: %v", err)
	}
	spawn(t, env) // the lock went with the process
}

// TestServeWarnsOfUnknownVariables: a misspelt BEET_* variable is named in
// a warning at start, with the setting it probably meant.
func TestServeWarnsOfUnknownVariables(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	env := []string{"BEET_DATABASE_URL=sqlite://" + filepath.Join(t.TempDir(), "beet.db"), "BEET_METRICS_LISTEN=off",
		"BEET_SWEEP_INTERVALL=1s"}
	p := spawn(t, env)
	if !strings.Contains(p.logs.String(), `BEET_SWEEP_INTERVALL is not a Beet setting (did you mean BEET_SWEEP_INTERVAL?)`) {
		t.Fatalf("no warning naming the variable:\n%s", p.logs.String())
	}
}

// TestConfigCheck: `beet config check` prints the effective settings with
// their sources and secrets masked, reads a settings file, and exits 1 on
// an invalid setting.
func TestConfigCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	file := filepath.Join(t.TempDir(), "beet.toml")
	os.WriteFile(file, []byte("role = \"worker\"\nredis_url = \"redis://:hunter2@cache:6379/0\"\n"), 0o600)
	env := []string{"BEET_CONFIG=" + file, "BEET_DATABASE_URL=postgres://beet:s3cret@db/beet", "BEET_LISTN=:1"}
	stdout, stderr, err := runBeet(t, env, "config", "check", "--listen", ":9999")
	if err != nil {
		t.Fatalf("config check: %v\n%s", err, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`BEET_ROLE\s+worker\s+file`),
		regexp.MustCompile(`BEET_LISTEN\s+:9999\s+flag`),
		regexp.MustCompile(`BEET_DATABASE_URL\s+postgres://beet:xxxxx@db/beet\s+env`),
		regexp.MustCompile(`BEET_REDIS_URL\s+redis://:xxxxx@cache:6379/0\s+file`),
		regexp.MustCompile(`BEET_SWEEP_INTERVAL\s+5s\s+default`),
		regexp.MustCompile(`warning: BEET_LISTN is not a Beet setting \(did you mean BEET_LISTEN\?\)`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("config check output lacks %s:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "hunter2") || strings.Contains(stdout, "s3cret") {
		t.Errorf("config check shows a secret:\n%s", stdout)
	}
	_, stderr, err = runBeet(t, append(env, "BEET_DELIVERY_LEASE=forever"), "config", "check")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "invalid settings: BEET_DELIVERY_LEASE") {
		t.Fatalf("config check with a bad setting: %v %q", err, stderr)
	}
}

// TestVersionFromBuildInfo: the binary reports the git revision Go stamped
// into it, and ldflags override version, commit and date. Go stamps only a
// checkout whose .git is a directory (not a git worktree's), so the first
// half runs where that holds (CI); internal/version tests the merging.
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if fi, statErr := os.Stat(filepath.Join(strings.TrimSpace(string(root)), ".git")); err == nil && statErr == nil && fi.IsDir() {
		rev, _ := exec.Command("git", "rev-parse", "HEAD").Output()
		stdout, _, err := runBeet(t, nil, "version")
		if err != nil || !strings.Contains(stdout, "commit "+string(rev[:12])) {
			t.Errorf("beet version = %q, %v; want the commit %s", stdout, err, rev[:12])
		}
	} else {
		t.Log("not a plain git checkout: Go stamps no revision here; checking ldflags only")
	}
	bin := filepath.Join(t.TempDir(), "beet")
	out, err := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X github.com/beethq/beet/internal/version.Version=v9.8.7 -X github.com/beethq/beet/internal/version.Commit=abcdef0123456789 -X github.com/beethq/beet/internal/version.Date=2026-01-02T03:04:05Z",
		".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, _ := exec.Command(bin, "version").Output()
	if string(got) != "beet v9.8.7 (commit abcdef012345, 2026-01-02T03:04:05Z)\n" {
		t.Errorf("release build says %q", got)
	}
}

// apiClient calls the management API of one instance.
type apiClient struct {
	t   *testing.T
	key string
}

func (c apiClient) call(base, method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	json.Unmarshal(b, &out)
	return res.StatusCode, out
}

func (c apiClient) must(base, method, path, body string) map[string]any {
	c.t.Helper()
	status, out := c.call(base, method, path, body)
	if status >= 300 {
		c.t.Fatalf("%s %s: %d %v", method, path, status, out)
	}
	return out
}
