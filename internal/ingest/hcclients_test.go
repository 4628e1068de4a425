package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// runitorUA is the User-Agent runitor sends (cmd/runitor/main.go).
const runitorUA = "runitor/v1.3.0 (linux-amd64; +https://bdd.fi/x/runitor)"

// runitor replays github.com/bdd/runitor's requests (internal/api.go):
// every ping is a POST with Content-Type text/plain to
// url.JoinPath(apiURL, uuid, type) with ?rid=<uuid4> of the run; the body
// is the command's output, its last Ping-Body-Limit bytes (as the start's
// answer announced it), with "\n[runitor] Output truncated to last N
// bytes." when it was longer; 408, 429 and 5xx are retried after 1 s, then
// 2 s (linear backoff, 2 retries). sleep stands in for the wait, so the
// test's clock moves instead of the wall clock.
type runitor struct {
	t         *testing.T
	apiURL    string
	uuid      string
	rid       string
	sleep     func(time.Duration)
	bodyLimit int
	tries     []int // statuses of every request sent
}

func (c *runitor) ping(typePath string, body []byte) *http.Response {
	c.t.Helper()
	u, _ := url.Parse(c.apiURL)
	u.Path, _ = url.JoinPath(u.Path, c.uuid, typePath)
	if c.rid != "" {
		u.RawQuery = url.Values{"rid": {c.rid}}.Encode()
	}
	for try := 0; ; try++ {
		c.sleep(time.Duration(try) * time.Second)
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, _ := http.NewRequest("POST", u.String(), rd)
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("User-Agent", runitorUA)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			c.t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		c.tries = append(c.tries, res.StatusCode)
		switch res.StatusCode {
		case 408, 429, 500, 502, 503, 504:
			if try < 2 {
				continue
			}
		}
		return res
	}
}

// start sends the start ping and reads the instance's body limit.
func (c *runitor) start() {
	c.t.Helper()
	res := c.ping("start", nil)
	if v := res.Header.Get("Ping-Body-Limit"); v != "" {
		c.bodyLimit, _ = strconv.Atoi(v)
	}
}

// end sends the command's output as a success (exit code 0) or, by
// default for a non-zero exit, to /{exit code}.
func (c *runitor) end(exitCode int, output string) *http.Response {
	c.t.Helper()
	body := []byte(output)
	if exitCode != 0 {
		body = fmt.Appendf(body, "\n[runitor] exit status %d", exitCode)
	}
	if c.bodyLimit > 0 && len(body) > c.bodyLimit { // runitor's ring buffer keeps the tail
		body = body[len(body)-c.bodyLimit:]
		body = fmt.Appendf(body, "\n[runitor] Output truncated to last %d bytes.", c.bodyLimit)
	}
	if exitCode == 0 {
		return c.ping("", body)
	}
	return c.ping(strconv.Itoa(exitCode), body)
}

// newUUIDBeet makes a beet whose token is a Healthchecks check's UUID, as
// `beet import healthchecks` does.
func (r *rig) newUUIDBeet(uuid string) *beet.Beet {
	r.t.Helper()
	now := r.clock.Now()
	b := &beet.Beet{AccountID: r.acct, Name: "imported", Token: uuid, Status: beet.StatusNew, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300}, CreatedAt: now, UpdatedAt: now}
	if err := r.store.CreateBeet(context.Background(), b); err != nil {
		r.t.Fatal(err)
	}
	return b
}

// TestRunitorReplayed: runitor's exact requests, pointed at {base}/ping
// with an imported check's UUID, give each of two overlapping runs of one
// job its own duration (by ?rid=), keep the output as each end's message
// (the tail, as runitor cuts it to the announced limit), record the exit
// code, and note no problem; a 429 is retried as runitor retries it.
func TestRunitorReplayed(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine, nil)
		b := r.newUUIDBeet("31365bce-8da9-4729-8ff3-aaa71d56b712")
		newRun := func(rid string) *runitor {
			return &runitor{t: t, apiURL: r.srv.URL + "/ping", uuid: b.Token, rid: rid, sleep: r.clock.Advance}
		}
		// Two runs overlap: A starts, B starts 10 s later, A succeeds at
		// 60 s, B fails with exit code 2 at 100 s.
		a, bb := newRun("0f8fad5b-d9cb-469f-a165-70867728950e"), newRun("7c9e6679-7425-40de-944e-e07fc1f90ae7")
		a.start()
		if a.bodyLimit != ingest.MaxBody {
			t.Fatalf("the start's answer announced Ping-Body-Limit %d, want %d", a.bodyLimit, ingest.MaxBody)
		}
		r.clock.Advance(10 * time.Second)
		bb.start()
		r.clock.Advance(50 * time.Second)
		longOutput := strings.Repeat("rsync: sent 1 file\n", 1000) + "done"
		a.end(0, longOutput)
		r.clock.Advance(40 * time.Second)
		bb.end(2, "rsync: connection refused")

		evs := r.events(b) // newest first
		if len(evs) != 4 {
			t.Fatalf("%d events, want 4", len(evs))
		}
		failEv, okEv := evs[0], evs[1]
		if failEv.Kind != beet.KindFail || failEv.ExitCode == nil || *failEv.ExitCode != 2 || failEv.Duration == nil || *failEv.Duration != 90*time.Second {
			t.Errorf("run B's end: kind %s, exit code %v, duration %v; want fail, 2, 1m30s", failEv.Kind, failEv.ExitCode, failEv.Duration)
		}
		if failEv.Message != "rsync: connection refused\n[runitor] exit status 2" {
			t.Errorf("run B's message %q", failEv.Message)
		}
		if okEv.Kind.Normal() != beet.KindPing || okEv.Duration == nil || *okEv.Duration != 60*time.Second {
			t.Errorf("run A's end: kind %s, duration %v; want ping, 1m0s", okEv.Kind, okEv.Duration)
		}
		tail := longOutput[len(longOutput)-ingest.MaxBody:]
		if want := strings.TrimSpace(tail + "\n[runitor] Output truncated to last 10000 bytes."); !strings.HasPrefix(want, okEv.Message) || len(okEv.Message) != ingest.MaxBody {
			t.Errorf("run A's message: %d bytes ending %q; want the output's tail cut to %d bytes", len(okEv.Message), okEv.Message[max(0, len(okEv.Message)-40):], ingest.MaxBody)
		}
		got, err := r.store.FindBeetByID(context.Background(), b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs.StartedAt != nil || len(got.Runs.ByRID) != 0 || len(got.Runs.RecentMS) != 2 {
			t.Errorf("beet's runs after both: %+v; want none open and two durations", got.Runs)
		}

		// A 429 is retried: 60 requests within the window, then the
		// success; runitor's retry a second later finds a free slot.
		c := newRun("")
		c.start()
		for range 59 {
			r.clock.Advance(100 * time.Millisecond)
			r.send("POST", ingest.PingPrefix+b.Token+"/log", "text/plain", "progress", runitorUA)
		}
		r.clock.Advance(3900 * time.Millisecond) // 9.8 s after the start, which leaves the window at 10 s
		res := c.end(0, "finished after a burst")
		if res.StatusCode != http.StatusOK || len(c.tries) != 3 || c.tries[1] != http.StatusTooManyRequests {
			t.Fatalf("runitor's statuses %v, want 200 for the start, 429, then 200 on the retry", c.tries)
		}
		evs = r.events(b)
		if e := evs[0]; e.Message != "finished after a burst" || e.Duration == nil || *e.Duration != 10800*time.Millisecond {
			t.Errorf("retried end: message %q, duration %v; want the output and 10.8s", e.Message, e.Duration)
		}
		for _, p := range r.problems(b, 1) {
			if p.Kind != beet.ProblemRateLimited {
				t.Errorf("problem %s (%s); want only the 429 noted", p.Kind, p.Detail)
			}
		}
	})
}

// TestHealthchecksShellClients replays the requests Healthchecks' docs
// give for a crontab line and a systemd service, against {base}/ping/:
// curl's GETs, --data-raw's form-encoded POST of the output, and the exit
// status in the path (a signal's name for a killed service), and
// py-healthchecks.io's log text sent as JSON; all are recorded and none
// is a problem.
func TestHealthchecksShellClients(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newUUIDBeet("803f680d-e89b-492b-82ef-2be7b774a92d")
	ping := ingest.PingPrefix + b.Token
	curl := "curl/8.5.0"
	step := func() { r.clock.Advance(30 * time.Second) }

	// crontab: 8 6 * * * /usr/bin/certbot renew && curl -fsS -m 10 --retry 5 -o /dev/null {ping}
	expectGIF(t, "cron GET", r.send("GET", ping, "", "", curl), 200)
	step()
	// crontab with the output: m=$(job 2>&1); curl -fsS -m 10 --retry 5 --data-raw "$m" {ping}/$?
	expectGIF(t, "cron exit status", r.send("POST", ping+"/1", "application/x-www-form-urlencoded", "certbot: renewal failed", curl), 200)
	step()
	// systemd: ExecStartPre=-curl -sS -m 10 --retry 5 {ping}/start, ExecStopPost=curl … {ping}/${EXIT_STATUS}
	expectGIF(t, "systemd start", r.send("GET", ping+"/start", "", "", curl), 200)
	r.clock.Advance(42 * time.Second)
	expectGIF(t, "systemd stop", r.send("GET", ping+"/0", "", "", curl), 200)

	// A service killed by a signal: systemd sets ${EXIT_STATUS} to its name.
	step()
	expectGIF(t, "systemd start", r.send("GET", ping+"/start", "", "", curl), 200)
	r.clock.Advance(5 * time.Second)
	expectGIF(t, "systemd stop by SIGTERM", r.send("GET", ping+"/TERM", "", "", curl), 200)
	// py-healthchecks.io posts its log text as Content-Type: application/json.
	step()
	expectGIF(t, "python log", r.send("POST", ping, "application/json", "synced 12 files\nno errors", "python-httpx/0.27.0"), 200)

	evs := r.events(b)
	if len(evs) != 7 {
		t.Fatalf("%d events, want 7", len(evs))
	}
	if e := evs[0]; e.Kind != beet.KindPing || e.Message != "synced 12 files\nno errors" {
		t.Errorf("python log: kind %s, message %q; want a ping with the text", e.Kind, e.Message)
	}
	if e := evs[1]; e.Kind != beet.KindFail || e.ExitCode == nil || *e.ExitCode != 143 || e.Duration == nil || *e.Duration != 5*time.Second {
		t.Errorf("systemd stop by SIGTERM: kind %s, exit code %v, duration %v; want fail, 143 (128+15), 5s", e.Kind, e.ExitCode, e.Duration)
	}
	evs = evs[3:]
	if e := evs[0]; e.ExitCode == nil || *e.ExitCode != 0 || e.Duration == nil || *e.Duration != 42*time.Second {
		t.Errorf("systemd stop: exit code %v, duration %v; want 0 and 42s", e.ExitCode, e.Duration)
	}
	if e := evs[2]; e.Kind != beet.KindFail || e.Message != "certbot: renewal failed" {
		t.Errorf("cron with output: kind %s, message %q", e.Kind, e.Message)
	}
	if ps := r.problems(b, 0); len(ps) != 0 {
		t.Errorf("problems %+v, want none", ps)
	}
}

// TestPingPathSameAsAPIPath: every signal under /ping/{token} answers and
// records exactly as under /api/v1/beet/{token}, and the two share one
// rate limit. (HEAD differs: TestHeadOnPingPathRecords.)
func TestPingPathSameAsAPIPath(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	api, ping := r.newBeet(false), r.newBeet(false)
	for _, suffix := range []string{"", "/start", "/log", "/fail", "/0", "/7", "/stat", "/"} {
		r.clock.Advance(time.Second)
		a := r.send("POST", ingest.Prefix+api.Token+suffix, "text/plain", "out"+suffix, "curl/8")
		p := r.send("POST", ingest.PingPrefix+ping.Token+suffix, "text/plain", "out"+suffix, "curl/8")
		expectGIF(t, "api"+suffix, a, 200)
		expectGIF(t, "ping"+suffix, p, 200)
	}
	for _, m := range []string{"OPTIONS", "PUT"} {
		a, p := r.send(m, ingest.Prefix+api.Token, "", "", "curl/8"), r.send(m, ingest.PingPrefix+ping.Token, "", "", "curl/8")
		if a.status != p.status || len(a.body) != len(p.body) || a.header.Get("Allow") != p.header.Get("Allow") {
			t.Errorf("%s: /api/v1/beet answers %d (%d bytes), /ping %d (%d bytes)", m, a.status, len(a.body), p.status, len(p.body))
		}
		checkHeaders(t, "ping "+m, p, false)
	}
	ea, ep := r.events(api), r.events(ping)
	if len(ea) != 7 || len(ep) != len(ea) {
		t.Fatalf("%d events under /api/v1/beet, %d under /ping; want 7 each (a trailing slash is the plain ping)", len(ea), len(ep))
	}
	for i := range ea {
		x, y := ea[i], ep[i]
		if x.Kind != y.Kind || fmt.Sprint(x.ExitCode) != fmt.Sprint(y.ExitCode) && (x.ExitCode == nil || y.ExitCode == nil || *x.ExitCode != *y.ExitCode) ||
			x.Message != y.Message || (x.Duration == nil) != (y.Duration == nil) {
			t.Errorf("event %d: %+v under /api/v1/beet, %+v under /ping", i, x, y)
		}
	}
	if pa, pp := r.problems(api, 1), r.problems(ping, 1); len(pa) != 1 || len(pp) != 1 || pa[0].Kind != pp[0].Kind {
		t.Errorf("problems %v under /api/v1/beet, %v under /ping; want one bad_path each", pa, pp)
	}
	// One limit for both paths of a token: 30 + 30 fill it.
	shared := r.newBeet(false)
	for i := range 60 {
		prefix := ingest.Prefix
		if i%2 == 1 {
			prefix = ingest.PingPrefix
		}
		expectGIF(t, "within the limit", r.send("GET", prefix+shared.Token, "", "", "curl/8"), 200)
	}
	expectGIF(t, "61st on /ping", r.send("GET", ingest.PingPrefix+shared.Token, "", "", "curl/8"), http.StatusTooManyRequests)
}

// TestImportedUUIDRecordedAtOnce: a check's UUID pinged (a miss, by GET
// and by a link preview, which looks it up) just before `beet import
// healthchecks` gives it to a beet is recorded at the next ping, not 30 s
// later; the same after the imported beet is deleted and imported again.
func TestImportedUUIDRecordedAtOnce(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	const uuid = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	ping := ingest.PingPrefix + uuid
	ctx := context.Background()
	imp := func() *beet.Beet {
		b, err := r.svc.ImportBeet(ctx, r.acct, service.ImportInput{BeetInput: service.BeetInput{Name: "Filesystem Backup"}, Token: uuid, SourceKey: "hc:" + uuid})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for round := range 2 {
		expectGIF(t, "before the import", r.send("GET", ping, "", "", "curl/8"), 200)
		expectGIF(t, "a link preview before the import", r.send("GET", ping, "", "", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"), 200)
		r.clock.Advance(time.Second)
		b := imp()
		for range 3 {
			r.clock.Advance(time.Second)
			expectGIF(t, "after the import", r.send("GET", ping, "", "", "curl/8"), 200)
		}
		if evs := r.events(b); len(evs) != 3 {
			t.Fatalf("round %d: %d events from 3 pings within 4 s of the import, want 3", round, len(evs))
		}
		if err := r.svc.DeleteBeet(ctx, r.acct, b.ID); err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(time.Second)
	}
}

// TestHeadOnPingPathRecords: Healthchecks counts a HEAD on ping/<uuid> as
// a ping (`curl -I`, `wget --spider`, its Go snippet's client.Head), so a
// HEAD under /ping/ records like a GET, signals included; under
// /api/v1/beet/ a HEAD records nothing, as the contract says. Both answer
// the GIF's headers without a body.
func TestHeadOnPingPathRecords(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	api, ping := r.newBeet(false), r.newBeet(false)
	for _, suffix := range []string{"", "/start", "/0", "/fail"} {
		r.clock.Advance(time.Second)
		a := r.send("HEAD", ingest.Prefix+api.Token+suffix, "", "", "curl/8.5.0")
		p := r.send("HEAD", ingest.PingPrefix+ping.Token+suffix, "", "", "Wget/1.21.3")
		for name, res := range map[string]result{"api": a, "ping": p} {
			if res.status != 200 || len(res.body) != 0 || res.header.Get("Content-Length") != "43" || res.header.Get("Content-Type") != "image/gif" {
				t.Errorf("%s HEAD%s: %d, %d bytes, Content-Length %q, Content-Type %q; want 200, no body, 43, image/gif",
					name, suffix, res.status, len(res.body), res.header.Get("Content-Length"), res.header.Get("Content-Type"))
			}
			checkHeaders(t, name+" HEAD"+suffix, res, false)
		}
	}
	if evs := r.events(api); len(evs) != 0 {
		t.Errorf("HEAD under /api/v1/beet/ recorded %d events; want none", len(evs))
	}
	evs := r.events(ping)
	if len(evs) != 4 {
		t.Fatalf("HEAD under /ping/ recorded %d events; want 4 (ping, start, /0, fail)", len(evs))
	}
	var kinds []string
	for _, e := range evs {
		if e.Method != "HEAD" {
			t.Errorf("event method %q; want HEAD", e.Method)
		}
		kinds = append(kinds, string(e.Kind))
	}
	slices.Sort(kinds)
	if got := strings.Join(kinds, ","); got != "fail,ping,ping,start" {
		t.Errorf("kinds %s; want fail,ping,ping,start", got)
	}

	// A link previewer's HEAD is still no ping.
	r.clock.Advance(time.Second)
	r.send("HEAD", ingest.PingPrefix+ping.Token, "", "", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")
	if n := len(r.events(ping)); n != 4 {
		t.Errorf("a Slackbot HEAD under /ping/ recorded: %d events; want 4", n)
	}
}
