package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testdb"
)

// hookReceiver is a loopback webhook endpoint that counts, per
// idempotency key, the notifications it answered with 200. While hold is
// set it keeps each request open without answering until the sender goes
// away: a delivery in flight.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	hold     bool
	arrivals int
	answered map[string]int
	events   map[string]int // event name → answered
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{answered: map[string]int{}, events: map[string]int{}}
	release := make(chan struct{})
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Event string `json:"event"`
			Key   string `json:"idempotency_key"`
		}
		b, _ := io.ReadAll(req.Body)
		json.Unmarshal(b, &body)
		r.mu.Lock()
		r.arrivals++
		hold := r.hold
		r.mu.Unlock()
		if hold {
			select {
			case <-req.Context().Done(): // the sender died
			case <-release:
			}
			return
		}
		r.mu.Lock()
		r.answered[body.Key]++
		r.events[body.Event]++
		r.mu.Unlock()
	}))
	t.Cleanup(func() { close(release); r.Close() })
	return r
}

func (r *hookReceiver) setHold(h bool) { r.mu.Lock(); r.hold = h; r.mu.Unlock() }

func (r *hookReceiver) counts() (arrivals, keys int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrivals, len(r.answered)
}

// waitFor polls cond every 50 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func scrape(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestThreeInstances runs `beet serve` three times over one PostgreSQL and
// one Redis: an ingest instance and two that run everything. The rate
// limit holds across them (exactly 60 of 100 concurrent pings), a rotated
// token is dead on all of them, and a worker killed with SIGKILL in the
// middle of a sweep transaction, then another killed while its webhooks
// are in flight, lose and duplicate nothing: every flip happens once and
// every notification is answered once at the receiver.
func TestThreeInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several servers; skipped in -short")
	}
	redisURL := os.Getenv("BEET_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("needs Redis: BEET_TEST_REDIS_URL is unset")
	}
	dbURL := testdb.URL(t, "postgres") // skips without PostgreSQL
	named := func(name string) string {
		u, _ := url.Parse(dbURL)
		q := u.Query()
		q.Set("application_name", name) // tells the instances apart in pg_stat_activity
		u.RawQuery = q.Encode()
		return u.String()
	}
	dir := t.TempDir()
	envFor := func(name, role string) []string {
		return []string{
			"BEET_DATABASE_URL=" + named(name), "BEET_ROLE=" + role, "BEET_REDIS_URL=" + redisURL,
			"BEET_SPOOL_PATH=" + filepath.Join(dir, name+".spool"),
			"BEET_ALLOW_PRIVATE_TARGETS=true", "BEET_METRICS_LISTEN=127.0.0.1:0", "BEET_CLEANUP_INTERVAL=0",
			// Short timings so the test takes seconds: sweep 5 times a
			// second, and a dead worker's claims lapse after 2 s.
			"BEET_SWEEP_INTERVAL=200ms", "BEET_DELIVERY_LEASE=2s",
		}
	}
	c := apiClient{t: t, key: cliAccount(t, envFor("cli", "all"), "ops@example.com")}

	var inst [3]*serveProc
	roles := []string{"ingest", "all", "all"}
	var wg sync.WaitGroup
	for i := range inst {
		wg.Go(func() { inst[i] = spawn(t, envFor(fmt.Sprintf("i%d", i+1), roles[i])) })
	}
	wg.Wait()
	for _, p := range inst {
		if p == nil {
			t.FailNow()
		}
	}
	byName := map[string]*serveProc{"i2": inst[1], "i3": inst[2]}

	recv := newHookReceiver(t)
	for _, path := range []string{"/a", "/b"} {
		c.must(inst[0].url, "POST", "/api/v1/channels", `{"kind": "webhook", "name": "hook`+path+`", "config": {"url": "`+recv.URL+path+`"}}`)
	}
	newBeet := func(name, detection string) (string, string) {
		b := c.must(inst[0].url, "POST", "/api/v1/beets", `{"name": "`+name+`"`+detection+`}`)
		return fmt.Sprint(int64(b["id"].(float64))), b["token"].(string)
	}
	ping := func(p *serveProc, token string) int {
		res, err := http.Get(p.url + "/api/v1/beet/" + token)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	countEvents := func(id string) int {
		return len(c.must(inst[0].url, "GET", "/api/v1/beets/"+id+"/events?limit=1000", "")["events"].([]any))
	}

	// The limit across instances: 100 concurrent pings, a third to each.
	limitID, limitToken := newBeet("limit", "")
	var mu sync.Mutex
	statuses := map[int]int{}
	start := make(chan struct{})
	for i := range 100 {
		wg.Go(func() {
			<-start
			s := ping(inst[i%3], limitToken)
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if statuses[200] != 60 || statuses[429] != 40 || countEvents(limitID) != 60 {
		for _, p := range inst {
			t.Log(grepLines(p.logs.String(), "redis|limit|fallback"))
		}
		t.Fatalf("100 concurrent pings over 3 instances: %v, %d events; want 60 200s, 40 429s, 60 events", statuses, countEvents(limitID))
	}

	// Rotation: every instance has seen the token; after the rotation on
	// one of them, none records the old one, and all take the new one.
	rotID, oldToken := newBeet("rotate", "")
	for _, p := range inst {
		ping(p, oldToken)
	}
	newToken := c.must(inst[1].url, "POST", "/api/v1/beets/"+rotID+"/rotate-token", "")["token"].(string)
	for _, p := range inst {
		ping(p, oldToken)
	}
	if n := countEvents(rotID); n != 3 {
		t.Fatalf("the old token recorded events after the rotation: %d events, want 3", n)
	}
	for _, p := range inst {
		ping(p, newToken)
	}
	if n := countEvents(rotID); n != 6 {
		t.Fatalf("the new token: %d events, want 6", n)
	}

	// Four beets go up, then their deadlines are moved into the past while
	// the test holds a lock that stops any sweep before it commits (the
	// sweep's flip insert waits for it). Four silences stay under the
	// global guard's minimum of five, so each one flips.
	var watch []string
	for i := range 4 {
		id, token := newBeet(fmt.Sprintf("watch %d", i), `, "detection": {"mode": "period", "period_seconds": 60, "grace_seconds": 0}`)
		ping(inst[0], token)
		watch = append(watch, id)
	}
	for _, id := range watch {
		if s := c.must(inst[0].url, "GET", "/api/v1/beets/"+id, "")["status"]; s != "up" {
			t.Fatalf("beet %s is %v after its first event, want up", id, s)
		}
	}
	pg, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	ctx := context.Background()
	block, err := pg.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer block.Rollback()
	if _, err := block.ExecContext(ctx, `LOCK TABLE flips IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.ExecContext(ctx, `UPDATE beets SET due_at = due_at - 120000000 WHERE name LIKE 'watch %'`); err != nil {
		t.Fatal(err)
	}
	var victim string
	waitFor(t, "a sweep blocked inside its transaction", func() bool {
		err := pg.QueryRowContext(ctx, `SELECT application_name FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO flips%' LIMIT 1`).Scan(&victim)
		return err == nil
	})
	p := byName[victim]
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	t.Logf("killed %s (pid %d) in the middle of its sweep", victim, p.cmd.Process.Pid)

	// The survivor sweeps once the lock goes; its webhooks are held open
	// until it too is killed, in flight.
	recv.setHold(true)
	block.Rollback()
	survivor := inst[1]
	if victim == "i2" {
		survivor = inst[2]
	}
	waitFor(t, "8 notifications in flight (4 flips × 2 channels)", func() bool { n, _ := recv.counts(); return n >= 8 })
	survivor.cmd.Process.Signal(syscall.SIGKILL)
	<-survivor.done
	var pending int
	pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND attempts = 1`).Scan(&pending)
	if pending != 8 {
		t.Fatalf("after killing the sender: %d deliveries pending on their first attempt, want 8", pending)
	}
	recv.setHold(false)

	// Two fresh instances take over: a worker and one that runs everything.
	worker := spawn(t, envFor("i4", "worker"))
	spawn(t, envFor("i5", "all"))
	waitFor(t, "the 8 alerts answered", func() bool { _, keys := recv.counts(); return keys == 8 })

	// Recovery through the ingest instance: 8 more notifications.
	for _, id := range watch {
		b := c.must(inst[0].url, "GET", "/api/v1/beets/"+id, "")
		if b["status"] != "down" {
			t.Fatalf("beet %s is %v after the sweep, want down", id, b["status"])
		}
	}
	rows, err := pg.QueryContext(ctx, `SELECT token FROM beets WHERE name LIKE 'watch %'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var token string
		rows.Scan(&token)
		ping(inst[0], token)
	}
	rows.Close()
	waitFor(t, "16 notifications answered", func() bool { _, keys := recv.counts(); return keys == 16 })
	time.Sleep(3 * time.Second) // a lease and a poll: room for any duplicate to show

	arrivals, _ := recv.counts()
	recv.mu.Lock()
	for key, n := range recv.answered {
		if n != 1 {
			t.Errorf("notification %s answered %d times", key, n)
		}
	}
	events := fmt.Sprint(recv.events)
	recv.mu.Unlock()
	if events != "map[beet.down:8 beet.up:8]" {
		t.Errorf("events answered: %s, want 8 beet.down and 8 beet.up", events)
	}
	var silences, dupes, recoveries, undelivered int
	pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM flips WHERE kind = 'silence'`).Scan(&silences)
	pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT beet_id FROM flips WHERE kind = 'silence' GROUP BY beet_id HAVING COUNT(*) > 1) d`).Scan(&dupes)
	pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM flips WHERE from_status = 'down' AND to_status = 'up'`).Scan(&recoveries)
	pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries WHERE status <> 'delivered'`).Scan(&undelivered)
	t.Logf("%d requests reached the receiver (8 cut off in flight); %d flips down, %d up; %d deliveries not delivered", arrivals, silences, recoveries, undelivered)
	if silences != 4 || dupes != 0 || recoveries != 4 || undelivered != 0 {
		t.Fatalf("flips: %d silences (%d beets twice), %d recoveries; %d deliveries not delivered; want 4, 0, 4, 0", silences, dupes, recoveries, undelivered)
	}

	// Roles: the worker serves no API, only probes; the ingest instance
	// never swept; the worker did.
	status, _ := c.call(worker.url, "GET", "/api/v1/beets", "")
	if status != http.StatusNotFound {
		t.Errorf("GET /api/v1/beets on a worker = %d, want 404", status)
	}
	if res, err := http.Get(worker.url + "/readyz"); err != nil || res.StatusCode != 200 {
		t.Errorf("worker /readyz: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if m := scrape(t, inst[0].admin); strings.Contains(m, "beet_sweep_seconds_count") || !strings.Contains(m, `beet_ingest_requests_total{outcome="recorded"}`) {
		t.Errorf("the ingest instance's metrics: sweeps or no ingestion:\n%s", grepLines(m, "beet_sweep|beet_ingest_requests"))
	}
	if m := scrape(t, worker.admin); !strings.Contains(m, "beet_sweep_seconds_count") || strings.Contains(m, "beet_ingest_requests_total") {
		t.Errorf("the worker's metrics:\n%s", grepLines(m, "beet_sweep|beet_ingest_requests"))
	}
}

// grepLines keeps the lines of s that contain any of the |-separated words.
func grepLines(s, words string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if slices.ContainsFunc(strings.Split(words, "|"), func(w string) bool { return strings.Contains(line, w) }) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
