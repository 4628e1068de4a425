package main

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
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
	env, tokens := crashRig(t, "sqlite", 200)
	env = append(env, "BEET_INGEST_FSYNC=overlap")
	p := startServe(t, env)
	stop := make(chan struct{})
	res, wg := load(p.url, tokens, 32, stop)
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	close(stop)
	wg.Wait()
	if !strings.Contains(p.logs.String(), "ingest_fsync=overlap") {
		t.Fatalf("the server did not say it fsyncs beside the next commit:\n%s", p.logs.String())
	}

	p = startServe(t, env)
	waitSpoolEmpty(t, env)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.done; err != nil {
		t.Fatalf("restarted server did not stop cleanly: %v\n%s", err, p.logs.String())
	}
	found := countEvents(t, env)
	acked, failed := res.acked.Load(), res.failed.Load()
	t.Logf("%d acknowledged, %d rate-limited, %d cut off by the kill; %d events in the database", acked, res.limited.Load(), failed, found)
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
