package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testlog"

	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// clock is a settable test clock.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// rig is a real ingestion server over a real store.
type rig struct {
	t     *testing.T
	srv   *httptest.Server
	store *sqlstore.DB
	svc   *service.Service
	clock *clock
	acct  int64
	log   *testlog.Buffer
	h     *ingest.Handler
	w     *ingest.Writer
}

func newRig(t *testing.T, engine string, limiter beet.RateLimiter) *rig {
	t.Helper()
	store := testdb.New(t, engine)
	svc := service.New(store, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	a, _, err := svc.CreateAccount(context.Background(), "ingest@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	spool, err := ingest.OpenSpool(filepath.Join(t.TempDir(), "beet.spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &testlog.Buffer{}
	log := testlog.New(logBuf)
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{Log: log})
	if limiter == nil {
		limiter = ratelimit.NewMemory(ratelimit.MemoryOptions{})
	}
	c := &clock{}
	c.Set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	h := ingest.New(ingest.Options{Store: store, Limiter: limiter, Writer: w, Now: c.Now, Log: log})
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); w.Close(); h.Close(); spool.Close() })
	return &rig{t: t, srv: srv, store: store, svc: svc, clock: c, acct: a.ID, log: logBuf, h: h, w: w}
}

func (r *rig) newBeet(allowBots bool) *beet.Beet {
	r.t.Helper()
	b, err := r.svc.CreateBeet(context.Background(), r.acct, service.BeetInput{Name: "b", AllowBots: allowBots})
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func (r *rig) send(method, path, contentType, body, ua string) result {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, r.srv.URL+path, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", ua)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return result{res.StatusCode, res.Header, b}
}

func (r *rig) events(b *beet.Beet) []*beet.Event {
	r.t.Helper()
	evs, err := r.store.FindEvents(context.Background(), beet.EventFilter{BeetID: b.ID, Limit: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	return evs
}

// problems waits for the async recorder to note at least want problems.
func (r *rig) problems(b *beet.Beet, want int) []*beet.Problem {
	r.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		ps, err := r.store.FindProblems(context.Background(), b.ID, 100)
		if err != nil {
			r.t.Fatal(err)
		}
		if len(ps) >= want || time.Now().After(deadline) {
			return ps
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var gif43 = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff\x21\xf9\x04\x01\x00\x00\x00\x00\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b")

func checkHeaders(t *testing.T, what string, res result, gif bool) {
	t.Helper()
	want := map[string]string{
		"Cache-Control":                "no-store, no-cache, must-revalidate, max-age=0",
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, POST, HEAD, OPTIONS",
		"Access-Control-Allow-Headers": "Content-Type",
		"Cross-Origin-Resource-Policy": "cross-origin",
		"X-Content-Type-Options":       "nosniff",
		"Ping-Body-Limit":              "10000",
	}
	if gif {
		want["Content-Type"] = "image/gif"
	}
	for k, v := range want {
		if got := res.header.Get(k); got != v {
			t.Errorf("%s: header %s = %q, want %q", what, k, got, v)
		}
	}
	if res.header.Get("Set-Cookie") != "" {
		t.Errorf("%s: sets a cookie", what)
	}
}

func expectGIF(t *testing.T, what string, res result, status int) {
	t.Helper()
	if res.status != status || !bytes.Equal(res.body, gif43) || res.header.Get("Content-Length") != "43" {
		t.Errorf("%s: status %d body %d bytes (Content-Length %q), want %d and the 43-byte GIF", what, res.status, len(res.body),
			res.header.Get("Content-Length"), status)
	}
	checkHeaders(t, what, res, true)
}

func TestContractRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine, nil)
		b := r.newBeet(false)
		path := ingest.Prefix + b.Token
		chrome := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

		// Recorded rows: each adds one event with the value shown.
		recorded := []struct {
			name, method, path, ctype, body string
			value                           *float64
			problem                         beet.ProblemKind
		}{
			{"GET with cache-buster", "GET", path + "?t=123", "", "", nil, ""},
			{"POST no body", "POST", path, "", "", nil, ""},
			{"POST {}", "POST", path, "application/json", "{}", nil, ""},
			{"POST value", "POST", path, "application/json", `{"value": 12.5, "extra": true}`, ptr(12.5), ""},
			{"sendBeacon text/plain", "POST", path, "text/plain;charset=UTF-8", `{"value": 3}`, ptr(3), ""},
			{"not an object", "POST", path, "application/json", `[1,2]`, nil, beet.ProblemBadBody},
			{"string value", "POST", path, "application/json", `{"value": "12"}`, nil, beet.ProblemBadValue},
			{"bool value", "POST", path, "application/json", `{"value": true}`, nil, beet.ProblemBadValue},
			{"null value", "POST", path, "application/json", `{"value": null}`, nil, beet.ProblemBadValue},
			{"array value", "POST", path, "application/json", `{"value": [1]}`, nil, beet.ProblemBadValue},
			{"1e400", "POST", path, "application/json", `{"value": 1e400}`, nil, beet.ProblemBadValue},
			{"body over the limit", "POST", path, "application/json", `{"value": 1, "pad": "` + strings.Repeat("x", ingest.MaxBody) + `"}`, nil, beet.ProblemBodyTooBig},
			// A job's output (runitor, curl --data-raw) is the message, not a problem.
			{"text output", "POST", path, "text/plain", "backup done\n3 files", nil, ""},
			{"curl --data-raw", "POST", path, "application/x-www-form-urlencoded", "rsync: 12 MB sent", nil, ""},
			{"text over the limit", "POST", path, "text/plain", strings.Repeat("y", ingest.MaxBody+500), nil, ""},
			{"POST from a bot UA", "POST", path, "", "", nil, ""},
		}
		nProblems := 0
		for i, c := range recorded {
			r.clock.Advance(time.Second) // stay under the rate limit
			ua := chrome
			if c.name == "POST from a bot UA" {
				ua = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
			}
			res := r.send(c.method, c.path, c.ctype, c.body, ua)
			expectGIF(t, c.name, res, 200)
			evs := r.events(b)
			if len(evs) != i+1 {
				t.Fatalf("%s: %d events, want %d", c.name, len(evs), i+1)
			}
			ev := evs[0]
			if (ev.Value == nil) != (c.value == nil) || (ev.Value != nil && *ev.Value != *c.value) {
				t.Errorf("%s: value %v, want %v", c.name, ev.Value, c.value)
			}
			if ev.Method != c.method || ev.UserAgent != ua || !ev.ReceivedAt.Equal(r.clock.Now().UTC().Truncate(time.Microsecond)) {
				t.Errorf("%s: event %+v", c.name, ev)
			}
			if want := strings.TrimSpace(c.body); c.ctype == "text/plain" || strings.HasPrefix(c.name, "curl") {
				if len(want) > ingest.MaxBody {
					want = want[:ingest.MaxBody] // kept cut, not dropped
				}
				if ev.Message != want {
					t.Errorf("%s: message of %d bytes %.40q, want the body's %d bytes", c.name, len(ev.Message), ev.Message, len(want))
				}
			}
			if c.problem != "" {
				nProblems++
				ps := r.problems(b, nProblems)
				if len(ps) == 0 || ps[0].Kind != c.problem || ps[0].Detail == "" {
					t.Errorf("%s: problems %+v, want %s first", c.name, ps, c.problem)
				}
				r.clock.Advance(11 * time.Second) // the next problem is a new one
			}
		}
		got, _ := r.store.FindBeetByID(context.Background(), b.ID)
		if got.LastEventAt == nil || !got.LastEventAt.Equal(r.clock.Now().UTC().Truncate(time.Microsecond)) {
			t.Errorf("last_event_at = %v", got.LastEventAt)
		}
		n := len(recorded)

		// Not recorded, 200 GIF.
		other := r.newBeet(false)
		oldToken := other.Token
		// The old token is used (and so cached) before rotation: after it,
		// it must record nothing at once all the same.
		expectGIF(t, "before rotation", r.send("GET", ingest.Prefix+oldToken, "", "", chrome), 200)
		if _, err := r.svc.RotateToken(context.Background(), r.acct, other.ID); err != nil {
			t.Fatal(err)
		}
		// The real token with its last character changed: "0", or "1" when
		// it ends in "0" already (1 token in 62), which would record.
		wrongLast := "0"
		if strings.HasSuffix(b.Token, "0") {
			wrongLast = "1"
		}
		for _, c := range []struct{ name, method, path, ua string }{
			{"unknown token", "GET", ingest.Prefix + beet.NewToken(), chrome},
			{"rotated token", "GET", ingest.Prefix + oldToken, chrome},
			{"rotated token POST", "POST", ingest.Prefix + oldToken, chrome},
			{"short token", "GET", ingest.Prefix + "bt_abc", chrome},
			{"wrong checksum", "GET", ingest.Prefix + b.Token[:len(b.Token)-1] + wrongLast, chrome},
			{"extra segment", "GET", path + "/more", chrome},
			{"empty token", "GET", ingest.Prefix, chrome},
			{"Slackbot GET", "GET", path, "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
			{"Twitterbot GET", "GET", path, "Twitterbot/1.0"},
			{"facebookexternalhit GET", "GET", path, "facebookexternalhit/1.1"},
		} {
			r.clock.Advance(time.Second)
			expectGIF(t, c.name, r.send(c.method, c.path, "", "", c.ua), 200)
		}
		if evs := r.events(b); len(evs) != n {
			t.Fatalf("%d events after unrecorded requests, want %d", len(evs), n)
		}
		if evs := r.events(other); len(evs) != 1 {
			t.Fatalf("%d events on the rotated beet, want only the 1 from before rotation", len(evs))
		}
		// Three bot GETs within 10 s are one problem; the extra segment
		// (an unknown signal) is another.
		if ps := r.problems(b, nProblems+2); len(ps) != nProblems+2 || ps[0].Kind != beet.ProblemIgnoredBot || ps[1].Kind != beet.ProblemBadPath {
			t.Errorf("bot GETs and an unknown signal noted as %d problems (want %d), newest %+v", len(ps), nProblems+2, ps[0])
		}

		// A beet that allows bots records their GETs.
		bots := r.newBeet(true)
		expectGIF(t, "bot allowed", r.send("GET", ingest.Prefix+bots.Token, "", "", "Discordbot/2.0"), 200)
		if len(r.events(bots)) != 1 {
			t.Error("allow_bots beet did not record a bot GET")
		}

		// HEAD: GIF headers, no body, nothing recorded.
		res := r.send("HEAD", path, "", "", chrome)
		if res.status != 200 || len(res.body) != 0 || res.header.Get("Content-Length") != "43" {
			t.Errorf("HEAD: %d, %d bytes, length %q", res.status, len(res.body), res.header.Get("Content-Length"))
		}
		checkHeaders(t, "HEAD", res, true)

		// Other methods: 405 GIF with Allow.
		for _, m := range []string{"PUT", "DELETE", "PATCH"} {
			res := r.send(m, path, "", "", chrome)
			expectGIF(t, m, res, 405)
			if res.header.Get("Allow") != "GET, POST, HEAD, OPTIONS" {
				t.Errorf("%s: Allow %q", m, res.header.Get("Allow"))
			}
		}
		if evs := r.events(b); len(evs) != n {
			t.Fatalf("HEAD/405 recorded events: %d, want %d", len(evs), n)
		}
	})
}

func TestRateLimitRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine, nil)
		b := r.newBeet(false)
		path := ingest.Prefix + b.Token
		for i := range 60 {
			r.clock.Advance(100 * time.Millisecond)
			if res := r.send("GET", path, "", "", "curl/8"); res.status != 200 {
				t.Fatalf("request %d: %d", i+1, res.status)
			}
		}
		// The 61st within 10 s: 429 GIF, Retry-After until the oldest leaves.
		r.clock.Advance(500 * time.Millisecond) // now 6.5 s after the first
		res := r.send("POST", path, "application/json", `{"value": 1}`, "curl/8")
		expectGIF(t, "61st", res, 429)
		if ra := res.header.Get("Retry-After"); ra != "4" {
			t.Errorf("Retry-After %q, want 4 (the first request leaves the window 3.6 s from now)", ra)
		}
		// A burst of rejections is one problem, and fills no slot.
		for range 200 {
			r.send("GET", path, "", "", "curl/8")
		}
		// OPTIONS is never limited.
		for range 5 {
			if res := r.send("OPTIONS", path, "", "", "curl/8"); res.status != 204 || len(res.body) != 0 {
				t.Fatalf("OPTIONS on a limited token: %d", res.status)
			}
			checkHeaders(t, "OPTIONS", res, false)
		}
		if n := len(r.events(b)); n != 60 {
			t.Fatalf("%d events, want 60", n)
		}
		if ps := r.problems(b, 1); len(ps) != 1 || ps[0].Kind != beet.ProblemRateLimited {
			t.Fatalf("problems after a burst of 201 rejections: %+v, want one rate_limited", ps)
		}
		// 3.6 s later the first slot frees.
		r.clock.Advance(3600 * time.Millisecond)
		if res := r.send("GET", path, "", "", "curl/8"); res.status != 200 {
			t.Fatalf("after the window slid: %d", res.status)
		}
		if n := len(r.events(b)); n != 61 {
			t.Fatalf("%d events, want 61", n)
		}
	})
}

// TestSixtyOfHundredConcurrent fires 100 concurrent requests at a fresh
// token: exactly 60 are accepted and recorded, with each limiter.
func TestSixtyOfHundredConcurrent(t *testing.T) {
	limiters := map[string]func(t *testing.T) beet.RateLimiter{
		"memory": func(*testing.T) beet.RateLimiter { return ratelimit.NewMemory(ratelimit.MemoryOptions{}) },
		"redis": func(t *testing.T) beet.RateLimiter {
			u := os.Getenv("BEET_TEST_REDIS_URL")
			if u == "" {
				t.Skip("Redis test skipped: BEET_TEST_REDIS_URL is unset")
			}
			opts, err := redis.ParseURL(u)
			if err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(opts)
			t.Cleanup(func() { c.Close() })
			return ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: fmt.Sprintf("beet:test:%d:", time.Now().UnixNano())})
		},
	}
	for name, newLimiter := range limiters {
		t.Run(name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, engine string) {
				r := newRig(t, engine, newLimiter(t))
				b := r.newBeet(false)
				var ok, limited atomic.Int32
				var wg sync.WaitGroup
				for range 100 {
					wg.Go(func() {
						req, _ := http.NewRequest("POST", r.srv.URL+ingest.Prefix+b.Token, strings.NewReader(`{"value":1}`))
						res, err := http.DefaultClient.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						io.Copy(io.Discard, res.Body)
						res.Body.Close()
						switch res.StatusCode {
						case 200:
							ok.Add(1)
						case 429:
							limited.Add(1)
						}
					})
				}
				wg.Wait()
				if ok.Load() != 60 || limited.Load() != 40 {
					t.Fatalf("%d accepted, %d limited; want 60 and 40", ok.Load(), limited.Load())
				}
				if n := len(r.events(b)); n != 60 {
					t.Fatalf("%d events recorded, want 60", n)
				}
			})
		})
	}
}

// TestLogsNeverHoldAToken drives every path of the handler with debug logs
// on, including a database outage, and checks no whole token is logged.
func TestLogsNeverHoldAToken(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	tokens := []string{b.Token, beet.NewToken()}
	for _, tok := range tokens {
		for range 62 {
			r.send("POST", ingest.Prefix+tok, "application/json", `{"value": "x"}`, "curl/8")
		}
	}
	r.store.Close() // the database goes away: lookups and writes fail
	r.clock.Advance(time.Minute)
	r.send("GET", ingest.Prefix+b.Token, "", "", "curl/8") // cached: only the write fails
	uncached := beet.NewToken()
	tokens = append(tokens, uncached)
	r.send("GET", ingest.Prefix+uncached, "", "", "curl/8")
	// Only a link-preview bot's request is looked up on the request path;
	// that lookup fails too.
	r.send("GET", ingest.Prefix+uncached, "", "", "Slackbot-LinkExpanding 1.1")
	time.Sleep(50 * time.Millisecond)
	logs := r.log.String()
	if !strings.Contains(logs, "bt_") {
		t.Fatalf("expected redacted tokens in the debug log; got:\n%s", logs)
	}
	for _, tok := range tokens {
		if strings.Contains(logs, tok) || strings.Contains(logs, tok[beet.RedactedLen:]) {
			t.Fatalf("log holds a token:\n%s", logs)
		}
	}
}

// People in in-app browsers, and jobs whose User-Agent holds a chat app's
// name, are recorded; a link preview is not, and the problem noted names
// the bot, though its token comes after 150 characters of browser.
func TestInAppBrowsersRecorded(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	path := ingest.Prefix + b.Token
	for _, ua := range []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.60.0.44 (like Safari/8617.1.17.10.6, panda)",
		"Mozilla/5.0 (Linux; Android 13; SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Viber/20.7.0.3",
		"MySignalProcessor/1.0 curl/8.0",
	} {
		r.clock.Advance(time.Second)
		expectGIF(t, ua, r.send("GET", path, "", "", ua), 200)
	}
	if evs := r.events(b); len(evs) != 3 {
		t.Errorf("%d events from two in-app browsers and a job, want 3", len(evs))
	}
	r.clock.Advance(time.Second)
	teams := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0.0.0 Safari/537.36 Edg/107.0.1418.62 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)"
	expectGIF(t, "Teams preview", r.send("GET", path, "", "", teams), 200)
	if evs := r.events(b); len(evs) != 3 {
		t.Errorf("%d events after a Teams link preview, want 3", len(evs))
	}
	ps := r.problems(b, 1)
	if len(ps) != 1 || ps[0].Kind != beet.ProblemIgnoredBot || !strings.Contains(ps[0].Detail, "from MicrosoftPreview (") {
		t.Fatalf("problems %+v, want one ignored_bot naming MicrosoftPreview", ps)
	}
}

func ptr(f float64) *float64 { return &f }

// A client that keeps sending a bad body every 4 s is noted when it starts
// and every 10 minutes while it goes on, not only at its first request; a
// pause of 10 s makes the next one a new burst.
func TestContinuingProblemNotedAgain(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	path := ingest.Prefix + b.Token
	for range 25 * 60 / 4 { // 25 minutes
		expectGIF(t, "bad value", r.send("POST", path, "application/json", `{"value": "s0"}`, "curl/8"), 200)
		r.clock.Advance(4 * time.Second)
	}
	ps := r.problems(b, 3)
	if len(ps) != 3 || ps[0].Kind != beet.ProblemBadValue || ps[0].At.Sub(ps[2].At) != 20*time.Minute {
		t.Fatalf("problems after 25 minutes of a bad body every 4 s: %+v, want 3 bad_value, 10 minutes apart", ps)
	}
	r.clock.Advance(10 * time.Second) // quiet: 14 s since the last
	r.send("POST", path, "application/json", `{"value": "s0"}`, "curl/8")
	if ps := r.problems(b, 4); len(ps) != 4 {
		t.Fatalf("%d problems after a pause, want 4", len(ps))
	}
}

// TestNotRecordedCounted: an event the writer cannot take (here, closed)
// is still answered 200 with the GIF, and counted as not_recorded, never
// as recorded: the outcome metric must show the loss the answer hides.
func TestNotRecordedCounted(t *testing.T) {
	store := testdb.New(t, "sqlite")
	svc := service.New(store, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	a, _, err := svc.CreateAccount(context.Background(), "lost@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateBeet(context.Background(), a.ID, service.BeetInput{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	spool, err := ingest.OpenSpool(filepath.Join(t.TempDir(), "beet.spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{})
	w.Close()
	var mu sync.Mutex
	counts := map[ingest.Outcome]int{}
	h := ingest.New(ingest.Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w,
		Count: func(o ingest.Outcome) { mu.Lock(); counts[o]++; mu.Unlock() }})
	defer h.Close()
	mux := http.NewServeMux()
	h.Register(mux)
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", ingest.Prefix+b.Token, nil),
		httptest.NewRequest("GET", ingest.PingPrefix+b.Token+"/fail", nil),
		httptest.NewRequest("POST", ingest.Prefix+b.Token, strings.NewReader(`{"value": "twelve"}`)),
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("%s %s = %d, want 200", req.Method, req.URL.Path, rec.Code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if counts[ingest.OutcomeNotRecorded] != 3 || counts[ingest.OutcomeRecorded] != 0 || counts[ingest.OutcomeBadBody] != 0 {
		t.Errorf("outcomes %v, want 3 not_recorded and nothing recorded", counts)
	}
}
