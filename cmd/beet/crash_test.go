package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testlog"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// buildBeet builds the real binary once per test binary run.
var buildBeet = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "beet-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "beet")
	// -buildvcs=true: stamp the git revision even where GOFLAGS says not to.
	out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// process is a running `beet serve`.
type process struct {
	cmd  *exec.Cmd
	url  string
	logs *testlog.Buffer
	done chan error
}

var listenURL = regexp.MustCompile(`msg=listening .*\surl=(http://\S+)`)

func startServe(t *testing.T, env []string) *process {
	t.Helper()
	bin, err := buildBeet()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "0", "--metrics-listen", "off")
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, logs: &testlog.Buffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.logs.Write([]byte(line + "\n"))
			if m := listenURL.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case p.url = <-found:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("beet serve did not start:\n%s", p.logs.String())
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// loadResult counts what the load generator saw.
type loadResult struct {
	acked, limited, failed atomic.Int64
}

// load sends POSTs round-robin over tokens from workers goroutines until
// stop is closed.
func load(url string, tokens []string, workers int, stop <-chan struct{}) (*loadResult, *sync.WaitGroup) {
	r := &loadResult{}
	var wg sync.WaitGroup
	var next atomic.Int64
	client := &http.Client{Timeout: 10 * time.Second}
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tok := tokens[int(next.Add(1))%len(tokens)]
				res, err := client.Post(url+"/api/v1/beet/"+tok, "application/json", strings.NewReader(`{"value": 1}`))
				if err != nil {
					r.failed.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case 200:
					r.acked.Add(1)
				case 429:
					r.limited.Add(1)
				default:
					r.failed.Add(1)
				}
			}
		})
	}
	return r, &wg
}

// crashRig sets up an account and beets through a first run of the server.
func crashRig(t *testing.T, engine string, beets int) (env []string, tokens []string) {
	dir := t.TempDir()
	env = []string{
		"BEET_DATABASE_URL=" + testdb.URL(t, engine),
		"BEET_SPOOL_PATH=" + filepath.Join(dir, "beet.spool"),
		"BEET_LOG_LEVEL=info",
	}
	p := startServe(t, env)
	key := cliAccount(t, env, "crash@example.com")
	for i := range beets {
		req, _ := http.NewRequest("POST", p.url+"/api/v1/beets", strings.NewReader(fmt.Sprintf(`{"name": "beet %d"}`, i)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b struct{ Token string }
		json.NewDecoder(res.Body).Decode(&b)
		res.Body.Close()
		if !beet.ValidTokenShape(b.Token) {
			t.Fatalf("create beet %d: status %d", i, res.StatusCode)
		}
		tokens = append(tokens, b.Token)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	return env, tokens
}

// envValue is the last value env gives key, as a process would see it.
func envValue(env []string, key string) string {
	var v string
	for _, e := range env {
		if rest, ok := strings.CutPrefix(e, key+"="); ok {
			v = rest
		}
	}
	return v
}

// waitSpoolEmpty waits up to 60 s for the spool file named in env to be
// empty (or absent).
func waitSpoolEmpty(t *testing.T, env []string) {
	t.Helper()
	path := envValue(env, "BEET_SPOOL_PATH")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		fi, err := os.Stat(path)
		if err != nil || fi.Size() == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spool still holds %d bytes 60 s after the restart", fi.Size())
		}
	}
}

// countEvents counts every event through a fresh server's store.
func countEvents(t *testing.T, env []string) int64 {
	t.Helper()
	db := testdb.Open(t, envValue(env, "BEET_DATABASE_URL"))
	beets, _, err := db.FindBeets(context.Background(), beet.BeetFilter{Limit: beet.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range beets {
		evs, err := db.FindEvents(context.Background(), beet.EventFilter{BeetID: b.ID, Limit: beet.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(evs))
	}
	db.Close()
	return n
}

// TestKillNineLosesNoAcknowledgedEvent kills `beet serve` with SIGKILL in
// the middle of concurrent ingestion, starts it again on the same
// database and spool, and counts: every request that got its 200 is an
// event. A request cut off by the kill got no answer and may or may not
// have been committed, so the count may exceed the 200s by at most those.
func TestKillNineLosesNoAcknowledgedEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped in -short")
	}
	testdb.Each(t, func(t *testing.T, engine string) {
		env, tokens := crashRig(t, engine, 200)
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

		// Restart: the spool (if any) is replayed, then a clean stop. On a
		// loaded machine a replay commit can time out and leave events in
		// the spool for the next start (nothing is lost), so wait for it to
		// empty before stopping, rather than count too early.
		p = startServe(t, env)
		waitSpoolEmpty(t, env)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-p.done; err != nil {
			t.Fatalf("restarted server did not stop cleanly: %v\n%s", err, p.logs.String())
		}
		found := countEvents(t, env)
		t.Logf("%s: %d acknowledged, %d rate-limited, %d cut off by the kill; %d events in the database",
			engine, res.acked.Load(), res.limited.Load(), res.failed.Load(), found)
		if res.acked.Load() < 100 {
			t.Fatalf("only %d requests acknowledged before the kill: the load did not run", res.acked.Load())
		}
		if found < res.acked.Load() {
			t.Fatalf("lost %d acknowledged events", res.acked.Load()-found)
		}
		if found > res.acked.Load()+res.failed.Load() {
			t.Fatalf("%d events but only %d requests acknowledged or cut off", found, res.acked.Load()+res.failed.Load())
		}
	})
}

// TestSIGTERMDrains stops `beet serve` with SIGTERM under load: it exits 0,
// every acknowledged event is stored, and none of the requests in flight
// at the signal is dropped without an answer that says so.
func TestSIGTERMDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals the binary; skipped in -short")
	}
	testdb.Each(t, func(t *testing.T, engine string) {
		env, tokens := crashRig(t, engine, 200)
		p := startServe(t, env)
		stop := make(chan struct{})
		res, wg := load(p.url, tokens, 32, stop)
		time.Sleep(time.Second)
		p.cmd.Process.Signal(syscall.SIGTERM)
		err := <-p.done
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("beet serve exited with %v after SIGTERM\n%s", err, p.logs.String())
		}
		if !strings.Contains(p.logs.String(), "stopped") && !strings.Contains(p.logs.String(), "shut") {
			t.Logf("logs:\n%s", p.logs.String())
		}
		found := countEvents(t, env)
		t.Logf("%s: %d acknowledged, %d events stored, %d refused after shutdown began", engine, res.acked.Load(), found, res.failed.Load())
		if found != res.acked.Load() {
			t.Fatalf("%d events stored, %d acknowledged: a graceful stop must store exactly what it acknowledged", found, res.acked.Load())
		}
	})
}
