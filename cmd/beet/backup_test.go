package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// runWith runs the CLI in-process with env as its whole environment.
func runWith(env []string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return envValue(env, k) }
	code := run(context.Background(), args, getenv, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// eventIDs lists every event's ID in the database at url.
func eventIDs(t *testing.T, url string) map[beet.EventID]bool {
	t.Helper()
	db := testdb.Open(t, url)
	defer db.Close()
	ctx := context.Background()
	beets, _, err := db.FindBeets(ctx, beet.BeetFilter{Limit: beet.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[beet.EventID]bool{}
	for _, b := range beets {
		evs, err := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: beet.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			ids[e.ID] = true
		}
	}
	return ids
}

// TestBackupWhileIngestingRestores takes a backup of a SQLite database
// while beet serve commits events into it, restores the copy into a new
// file and serves from it: every event acknowledged before the backup
// began is there, nothing that the original lacks, and the restored
// instance is ready and records new events.
func TestBackupWhileIngestingRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	env, tokens := crashRig(t, "sqlite", 30)
	p := startServe(t, env)
	stop := make(chan struct{})
	res, wg := load(p.url, tokens, 16, stop)
	for deadline := time.Now().Add(30 * time.Second); res.acked.Load() < 300; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d events acknowledged after 30 s of load", res.acked.Load())
		}
	}
	before := res.acked.Load()
	backup := filepath.Join(t.TempDir(), "backup.db")
	code, out, errOut := runWith(env, "backup", "--output", backup)
	after := res.acked.Load() + res.failed.Load()
	time.Sleep(300 * time.Millisecond) // keep ingesting past the backup
	close(stop)
	wg.Wait()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if code != 0 {
		t.Fatalf("beet backup: exit %d: %s", code, errOut)
	}
	var rep struct {
		Path          string
		Integrity     string
		SchemaVersion int64 `json:"schema_version"`
		Beets, Events int64
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("backup printed %q: %v", out, err)
	}
	t.Logf("backup: %s; %d acknowledged before it began, %d by its end, %d in all", out, before, after, res.acked.Load())
	if rep.Integrity != "ok" || rep.Beets != 30 || rep.SchemaVersion < 1 || rep.Path != backup {
		t.Fatalf("backup report %+v", rep)
	}
	if rep.Events < before || rep.Events > after {
		t.Fatalf("the backup holds %d events; %d were acknowledged before it began and %d by its end", rep.Events, before, after)
	}
	if res.acked.Load() <= rep.Events {
		t.Fatalf("the load stopped before the backup did (%d acknowledged, %d in the copy): the test proves nothing", res.acked.Load(), rep.Events)
	}
	if _, err := os.Stat(backup + ".partial"); err == nil {
		t.Fatal("the partial file was left behind")
	}

	// Restore: the copy becomes the database of a new instance.
	dir := t.TempDir()
	restored := filepath.Join(dir, "beet.db")
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(restored, data, 0o600)
	renv := []string{"BEET_DATABASE_URL=sqlite://" + restored, "BEET_SPOOL_PATH=" + filepath.Join(dir, "beet.spool")}
	r := startServe(t, renv)
	ready, err := http.Get(r.url + "/readyz")
	if err != nil || ready.StatusCode != 200 {
		t.Fatalf("restored instance not ready: %v %v", ready, err)
	}
	ready.Body.Close() // an unread body holds its connection (and two goroutines) for good
	gif, err := http.Get(r.url + "/api/v1/beet/" + tokens[0])
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, gif.Body)
	gif.Body.Close()
	r.cmd.Process.Signal(syscall.SIGTERM)
	<-r.done

	original := eventIDs(t, envValue(env, "BEET_DATABASE_URL"))
	copied := eventIDs(t, "sqlite://"+restored)
	if int64(len(copied)) != rep.Events+1 {
		t.Fatalf("the restored database holds %d events; want the backup's %d plus the one sent to it", len(copied), rep.Events)
	}
	extra := 0
	for id := range copied {
		if !original[id] {
			extra++
		}
	}
	if extra != 1 {
		t.Fatalf("%d events of the restored database are not in the original; want only the one sent after the restore", extra)
	}
}

func TestBackupPostgresPrintsPgDump(t *testing.T) {
	env := []string{"BEET_DATABASE_URL=postgres://beet:s3cret@db.example.com/beet"}
	code, out, errOut := runWith(env, "backup", "--output", "/backups/beet.dump")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (no backup was made)", code)
	}
	oneLineOn(t, errOut)
	if want := `pg_dump --format=custom --no-owner --file=/backups/beet.dump "$BEET_DATABASE_URL"`; strings.TrimSpace(out) != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if !strings.Contains(errOut, "pg_dump") || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("stderr %q", errOut)
	}
}

func TestBackupRefusals(t *testing.T) {
	e := newTestEnv(t)
	e.mustRun(nil, "migrate")
	dir := t.TempDir()
	existing := filepath.Join(dir, "taken.db")
	os.WriteFile(existing, []byte("keep me"), 0o600)
	missingDB := []string{"BEET_DATABASE_URL=sqlite://" + filepath.Join(dir, "nothing-here.db")}
	dbEnv := []string{"BEET_DATABASE_URL=" + e.dbURL}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"no output", dbEnv, []string{"backup"}, 2, "--output is required"},
		{"existing output", dbEnv, []string{"backup", "--output", existing}, 1, "already exists"},
		{"no database", missingDB, []string{"backup", "--output", filepath.Join(dir, "b.db")}, 1, "nothing-here.db"},
		{"onto itself", dbEnv, []string{"backup", "--output", strings.TrimPrefix(e.dbURL, "sqlite://")}, 1, "the database itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runWith(tc.env, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Fatal("an existing file was overwritten")
	}
	if _, err := os.Stat(filepath.Join(dir, "nothing-here.db")); err == nil {
		t.Fatal("backup created the database it was asked to copy")
	}
}

func TestHealthcheck(t *testing.T) {
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ready"}`))
	}))
	defer ready.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"unavailable","reason":"database unreachable"}`))
	}))
	defer down.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	// The default target is /readyz on BEET_LISTEN, dialled on loopback.
	port := ready.URL[strings.LastIndex(ready.URL, ":")+1:]
	if code, out, errOut := runWith([]string{"BEET_LISTEN=:" + port}, "healthcheck"); code != 0 || !strings.Contains(out, "ready") {
		t.Fatalf("ready instance: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut := runWith(nil, "healthcheck", "--url", down.URL+"/readyz")
	if code != 1 || !strings.Contains(errOut, "503") || !strings.Contains(errOut, "database unreachable") {
		t.Fatalf("unready instance: exit %d, stderr %q", code, errOut)
	}
	oneLineOn(t, errOut)
	if code, _, errOut := runWith(nil, "healthcheck", "--url", gone.URL+"/readyz", "--timeout", "2s"); code != 1 {
		t.Fatalf("no instance: exit %d, stderr %q", code, errOut)
	}
}

func TestLoopbackAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "[::1]:8080",
		"10.0.0.5:9000":  "10.0.0.5:9000",
		"localhost:8080": "localhost:8080",
	} {
		if got := loopbackAddr(in); got != want {
			t.Errorf("loopbackAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
