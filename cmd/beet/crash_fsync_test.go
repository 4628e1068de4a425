package main

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testdb"
)

// TestKillNineWithOverlappedFsync is the kill -9 test on SQLite with
// BEET_INGEST_FSYNC=overlap named, so it keeps testing that mode whatever
// the default: commits with synchronous=NORMAL and the WAL's fsync beside
// the next commit. Every request answered 200 before the kill must be an
// event in the file after a restart.
func TestKillNineWithOverlappedFsync(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped in -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the overlapped fsync is offered on Linux only")
	}
	killNineAndCount(t, "sqlite", "BEET_INGEST_FSYNC=overlap", "ingest_fsync=overlap", 1500*time.Millisecond)
}

// TestKillNineWithJournal is the kill -9 test on both engines with
// BEET_INGEST_ACK=journal: a request is answered once its event is in the
// spool, before the database has it. Every request answered 200 before the
// kill must be an event in the database once the restart has applied the
// spool, and none may be stored twice.
func TestKillNineWithJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped in -short")
	}
	testdb.Each(t, func(t *testing.T, engine string) {
		// Killed early, while the load runs (the limiter stops it at 60
		// pings a beet), so that the spool holds events the database has
		// not taken yet.
		killNineAndCount(t, engine, "BEET_INGEST_ACK=journal", "ingest_ack=journal", 400*time.Millisecond)
	})
}

// killNineAndCount runs the kill -9 test with one more setting, killing
// the server after the given time under load, and checks that its log
// names the setting (so the test cannot pass on the default).
func killNineAndCount(t *testing.T, engine, setting, logged string, after time.Duration) {
	env, tokens := crashRig(t, engine, 200)
	env = append(env, setting)
	p := startServe(t, env)
	stop := make(chan struct{})
	res, wg := load(p.url, tokens, 32, stop)
	// At least `after`, and until the load has had 100 answers: on a busy
	// machine the server may take longer than `after` to answer that many.
	time.Sleep(after)
	for deadline := time.Now().Add(20 * time.Second); res.acked.Load() < 100 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	close(stop)
	wg.Wait()
	if !strings.Contains(p.logs.String(), logged) {
		t.Fatalf("the server did not log %s:\n%s", logged, p.logs.String())
	}

	if strings.Contains(p.logs.String(), "replaying") {
		t.Fatalf("the first run found a spool to replay:\n%s", p.logs.String())
	}
	p = startServe(t, env)
	waitSpoolEmpty(t, env)
	t.Logf("restart: %s", firstLine(p.logs.String(), "spool holds events"))
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.done; err != nil {
		t.Fatalf("restarted server did not stop cleanly: %v\n%s", err, p.logs.String())
	}
	found := countEvents(t, env)
	acked, failed := res.acked.Load(), res.failed.Load()
	t.Logf("%s, %s: %d acknowledged, %d rate-limited, %d cut off by the kill; %d events in the database",
		engine, setting, acked, res.limited.Load(), failed, found)
	if acked < 100 {
		t.Fatalf("only %d requests acknowledged before the kill: the load did not run", acked)
	}
	if found < acked {
		t.Fatalf("lost %d acknowledged events", acked-found)
	}
	if found > acked+failed {
		t.Fatalf("%d events but only %d requests acknowledged or cut off", found, acked+failed)
	}
}

// firstLine is the first line of s holding sub, or "" if none.
func firstLine(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
