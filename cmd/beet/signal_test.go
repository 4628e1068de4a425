package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// served is a running `beet serve` with an account, driven over HTTP.
type served struct {
	t   *testing.T
	p   *process
	key string
}

const signalMetricsToken = "metrics-token-for-the-signal-test"

func serveWithAccount(t *testing.T, engine string) *served {
	t.Helper()
	dir := t.TempDir()
	env := []string{
		"BEET_DATABASE_URL=" + testdb.URL(t, engine),
		"BEET_SPOOL_PATH=" + filepath.Join(dir, "beet.spool"),
		"BEET_LOG_LEVEL=debug",
	}
	bin, err := buildBeet()
	if err != nil {
		t.Fatal(err)
	}
	// Only serve and migrate create a database.
	mig := exec.Command(bin, "migrate")
	mig.Env = append(os.Environ(), env...)
	if out, err := mig.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v %s", err, out)
	}
	key := cliAccount(t, env, "jobs@example.com")
	// Metrics are read on the public listener, which serves them only to
	// this token (the admin listener is off in startServe).
	s := &served{t: t, p: startServe(t, append(env, "BEET_METRICS_TOKEN="+signalMetricsToken)), key: key}
	t.Cleanup(func() {
		s.p.cmd.Process.Signal(syscall.SIGTERM)
		<-s.p.done
	})
	return s
}

func (s *served) api(method, path, body string, v any) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.p.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// ping sends one ingestion request and checks it got the GIF.
func (s *served) ping(method, token, suffix, body string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.p.url+"/api/v1/beet/"+token+suffix, strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/gif" || len(b) != 43 {
		s.t.Fatalf("%s %s: %d %s, %d bytes; want the GIF", method, suffix, res.StatusCode, res.Header.Get("Content-Type"), len(b))
	}
}

type servedBeet struct {
	ID           int64
	Token        string
	Status       string
	StatusReason string     `json:"status_reason"`
	Expectation  string     `json:"expectation"`
	RunningSince *time.Time `json:"running_since"`
	DueAt        *time.Time `json:"due_at"`
}

type servedEvent struct {
	ReceivedAt time.Time `json:"received_at"`
	Kind       string
	ExitCode   *int   `json:"exit_code"`
	DurationMS *int64 `json:"duration_ms"`
	Message    string
}

func (s *served) createBeet(body string) servedBeet {
	s.t.Helper()
	var b servedBeet
	s.api("POST", "/api/v1/beets", body, &b)
	return b
}

// waitStatus polls the beet until it has status want (the sweeper runs
// every few seconds), and returns it.
func (s *served) waitStatus(id int64, want string) servedBeet {
	s.t.Helper()
	var b servedBeet
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s.api("GET", fmt.Sprintf("/api/v1/beets/%d", id), "", &b)
		if b.Status == want {
			return b
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("beet %d is %s (%q) after 30 s, want %s", id, b.Status, b.StatusReason, want)
		}
	}
}

func (s *served) events(id int64) []servedEvent {
	s.t.Helper()
	var out struct{ Events []servedEvent }
	s.api("GET", fmt.Sprintf("/api/v1/beets/%d/events", id), "", &out)
	return out.Events
}

// TestJobSignalsEndToEnd drives the built binary on each engine: a
// failure (/fail, /{exit code}) turns a beet down in every mode with a
// reason naming the code and the time in the beet's zone, the next
// success brings it up; a start and an end record the run's duration; a
// run past max_runtime_seconds turns the beet down; /log keeps a message
// and changes nothing; an old token records nothing but is counted; no
// log line or metric holds a token.
func TestJobSignalsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped in -short")
	}
	testdb.Each(t, func(t *testing.T, engine string) {
		s := serveWithAccount(t, engine)
		var tokens []string

		// Failure and recovery in every mode.
		modes := map[string]string{
			"auto":   `{"mode": "auto"}`,
			"period": `{"mode": "period", "period_seconds": 3600, "grace_seconds": 60}`,
			"cron":   `{"mode": "cron", "cron": "0 3 * * *", "timezone": "Europe/Riga", "grace_seconds": 300}`,
		}
		for mode, det := range modes {
			b := s.createBeet(`{"name": "backup ` + mode + `", "timezone": "Europe/Riga", "detection": ` + det + `}`)
			tokens = append(tokens, b.Token)
			s.ping("GET", b.Token, "", "")
			s.ping("POST", b.Token, "/2", "rsync: connection refused")
			down := s.waitStatus(b.ID, "down")
			evs := s.events(b.ID)
			riga, _ := time.LoadLocation("Europe/Riga")
			want := "The job reported failure (exit code 2) at " + evs[0].ReceivedAt.In(riga).Format("15:04 MST") + "."
			if down.StatusReason != want || evs[0].Kind != "fail" || evs[0].ExitCode == nil || *evs[0].ExitCode != 2 || evs[0].Message != "rsync: connection refused" {
				t.Errorf("%s: reason %q (want %q), event %+v", mode, down.StatusReason, want, evs[0])
			}
			s.ping("GET", b.Token, "/log", "")
			s.ping("POST", b.Token, "/log", "retrying with --partial")
			if got := s.waitStatus(b.ID, "down"); got.StatusReason != want {
				t.Errorf("%s: a log changed the beet: %+v", mode, got)
			}
			s.ping("GET", b.Token, "/fail", "")
			s.ping("POST", b.Token, "/0", "")
			up := "up"
			if mode == "auto" {
				up = "learning" // it failed before its rhythm was learned
			}
			if got := s.waitStatus(b.ID, up); !strings.HasPrefix(got.StatusReason, "The job succeeded at ") {
				t.Errorf("%s: recovery reason %q", mode, got.StatusReason)
			}
			kinds := ""
			for _, e := range s.events(b.ID) {
				kinds += e.Kind + " "
			}
			if kinds != "ping fail log log fail ping " {
				t.Errorf("%s: events newest first %q", mode, kinds)
			}
		}

		// A run's duration, and the run-time limit.
		b := s.createBeet(`{"name": "nightly", "detection": {"mode": "period", "period_seconds": 86400, "grace_seconds": 600, "max_runtime_seconds": 2}}`)
		tokens = append(tokens, b.Token)
		s.ping("GET", b.Token, "/start", "")
		time.Sleep(1100 * time.Millisecond)
		s.ping("GET", b.Token, "", "")
		evs := s.events(b.ID)
		if len(evs) != 2 || evs[0].DurationMS == nil || *evs[0].DurationMS < 1100 || evs[1].Kind != "start" {
			t.Fatalf("start and end: %+v; want the end to carry the run's duration (at least 1100 ms)", evs)
		}
		s.waitStatus(b.ID, "up")
		s.ping("POST", b.Token, "/start", "")
		over := s.waitStatus(b.ID, "down") // no end within 2 s
		if !strings.HasPrefix(over.StatusReason, "Started at ") || !strings.Contains(over.StatusReason, "still running after 2 s") ||
			!strings.Contains(over.StatusReason, "the limit is 2 s") {
			t.Errorf("overrun reason %q", over.StatusReason)
		}
		s.ping("POST", b.Token, "/0", "")
		s.waitStatus(b.ID, "up")
		if evs := s.events(b.ID); evs[0].DurationMS == nil || *evs[0].DurationMS < 2000 {
			t.Errorf("the late end carries %v ms; want the whole run", evs[0].DurationMS)
		}

		// Exit codes: the highest is a failure with its code and the run's
		// duration; one past it is no signal at all.
		codes := s.createBeet(`{"name": "exit codes", "detection": {"mode": "period", "period_seconds": 3600, "grace_seconds": 60}}`)
		tokens = append(tokens, codes.Token)
		s.ping("GET", codes.Token, "/start", "")
		s.ping("POST", codes.Token, "/255", "")
		s.ping("GET", codes.Token, "/256", "")
		s.waitStatus(codes.ID, "down")
		evs = s.events(codes.ID)
		if len(evs) != 2 || evs[0].Kind != "fail" || evs[0].ExitCode == nil || *evs[0].ExitCode != 255 || evs[0].DurationMS == nil || evs[1].Kind != "start" {
			t.Errorf("start then /255 then /256: %+v; want the failure with code 255 and its duration, and nothing for /256", evs)
		}
		var problems struct{ Problems []struct{ Kind string } }
		for deadline := time.Now().Add(15 * time.Second); len(problems.Problems) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			s.api("GET", fmt.Sprintf("/api/v1/beets/%d/problems", codes.ID), "", &problems) // noted off the request path
		}
		if len(problems.Problems) != 1 || problems.Problems[0].Kind != "bad_path" {
			t.Errorf("/256 noted as %+v; want one bad_path", problems)
		}

		// Auto mode learns the run-time limit from 3 runs (twice the
		// longest, at least 5 min more than it: 5 min for these short
		// runs: the longest plus 5 min), and an open run is then due at its
		// start plus the limit.
		auto := s.createBeet(`{"name": "learned runs"}`)
		tokens = append(tokens, auto.Token)
		for range 3 {
			s.ping("GET", auto.Token, "/start", "")
			s.ping("GET", auto.Token, "/0", "")
		}
		s.ping("GET", auto.Token, "/start", "")
		var running servedBeet
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			s.api("GET", fmt.Sprintf("/api/v1/beets/%d", auto.ID), "", &running)
			if running.RunningSince != nil || time.Now().After(deadline) {
				break
			}
		}
		if !strings.Contains(running.Expectation, "a run still going after 5 min turns the beet down") || running.RunningSince == nil ||
			running.DueAt == nil || running.DueAt.Before(running.RunningSince.Add(5*time.Minute)) || running.DueAt.After(running.RunningSince.Add(5*time.Minute+time.Second)) {
			t.Errorf("after 3 runs in auto mode, an open run: running since %v, due %v, expectation %q; want due 5 min (and the longest run) after the start",
				running.RunningSince, running.DueAt, running.Expectation)
		}
		ends := 0
		for _, e := range s.events(auto.ID) {
			if e.DurationMS != nil {
				ends++
			}
		}
		if ends != 3 {
			t.Errorf("%d of the auto beet's events carry a duration; want 3", ends)
		}

		// An old token records nothing and is counted on its beet.
		var rot struct{ Token string }
		s.api("POST", fmt.Sprintf("/api/v1/beets/%d/rotate-token", b.ID), "", &rot)
		tokens = append(tokens, rot.Token)
		before := len(s.events(b.ID))
		for range 3 {
			s.ping("GET", b.Token, "/0", "")
		}
		var list struct {
			RotatedTokens []struct{ Hits int64 } `json:"rotated_tokens"`
		}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			s.api("GET", fmt.Sprintf("/api/v1/beets/%d/rotated-tokens", b.ID), "", &list)
			if len(list.RotatedTokens) == 1 && list.RotatedTokens[0].Hits == 3 || time.Now().After(deadline) {
				break
			}
		}
		if len(list.RotatedTokens) != 1 || list.RotatedTokens[0].Hits != 3 {
			t.Errorf("old token hits: %+v, want 3", list)
		}
		if n := len(s.events(b.ID)); n != before {
			t.Errorf("the old token recorded %d events", n-before)
		}
		s.ping("GET", beet.NewToken(), "/start", "")
		s.ping("GET", "bt_typo", "", "")

		// Neither the logs nor the metrics hold a whole token.
		req, _ := http.NewRequest("GET", s.p.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+signalMetricsToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, want := range []string{`beet_ingest_unknown_tokens_total{outcome="rotated"} 3`, `beet_ingest_unknown_tokens_total{outcome="malformed"} 1`} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		logs := s.p.logs.String()
		for _, tok := range append(tokens, b.Token) {
			if strings.Contains(logs, tok[beet.RedactedLen:]) || strings.Contains(string(metrics), tok[beet.RedactedLen:]) {
				t.Errorf("a token's secret part is in the logs or metrics")
			}
		}
	})
}
