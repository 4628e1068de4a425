package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testlog"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/server"
)

func TestRequestLogNeverHoldsAWholeToken(t *testing.T) {
	var logs testlog.Buffer
	log := testlog.New(&logs)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/beet/{token}", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			panic("boom")
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/other/{x}", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	srv := server.New(mux, log)
	if err := srv.Open("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	token, key := beet.NewToken(), beet.NewAPIKey()
	notAToken := "not-a-real-token-but-still-secret"
	uuid := "31365bce-8da9-4729-8ff3-aaa71d56b712" // an imported check's token
	for _, req := range []struct{ method, path string }{
		{"GET", "/" + uuid},                  // hc-ping.com's URL with only the host changed
		{"GET", "/ping//" + uuid + "/start"}, // served clean, logged redacted
		{"GET", "/api/v1/beet//" + token},
		{"GET", "/api/v1/beet/" + token},
		{"POST", "/api/v1/beet/" + token + "?value=1"},
		{"PUT", "/api/v1/beet/" + token}, // panics
		{"GET", "/api/v1/beet/" + notAToken},
		{"GET", "/other/x" + key},
		{"GET", "/other/" + token},
	} {
		r, err := http.NewRequest(req.method, srv.URL()+req.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	srv.Shutdown(context.Background())

	out := logs.String()
	for _, secret := range []string{token, key, notAToken, uuid} {
		if strings.Contains(out, secret) {
			t.Errorf("log holds a whole secret %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		"path=/api/v1/beet/" + beet.Redact(token),
		"status=500", "handler panicked", "method=PUT",
		"path=/other/x" + beet.Redact(key),
		"path=/31365bc… status=404", "path=/ping/31365bc…/start status=404",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "msg=request"); n != 9 {
		t.Errorf("%d request lines, want 9:\n%s", n, out)
	}
}

type fakeChecker struct {
	pingErr error
	current bool
	err     error
}

func (f fakeChecker) Ping(context.Context) error                  { return f.pingErr }
func (f fakeChecker) SchemaCurrent(context.Context) (bool, error) { return f.current, f.err }

type fakeIntake bool

func (f fakeIntake) CanSpool() bool { return bool(f) }

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c          fakeChecker
		path       string
		status     int
		wantStatus string
		wantReason string
		in         server.Intake
	}{
		{"healthz", fakeChecker{pingErr: errors.New("down")}, "/healthz", 200, "ok", "", nil},
		{"ready", fakeChecker{current: true}, "/readyz", 200, "ready", "", nil},
		{"db down", fakeChecker{pingErr: errors.New("dial tcp: refused")}, "/readyz", 503, "unavailable", "database unreachable", nil},
		{"old schema", fakeChecker{current: false}, "/readyz", 503, "unavailable", "database schema is not current; run beet migrate", nil},
		{"schema error", fakeChecker{err: errors.New("x")}, "/readyz", 503, "unavailable", "schema check failed", nil},
		// An instance that takes pings stays in the load balancer while its
		// spool keeps them; one whose spool cannot does not.
		{"db down, spooling", fakeChecker{pingErr: errors.New("refused")}, "/readyz", 200, "degraded", "database unreachable; pings are spooled", fakeIntake(true)},
		{"db down, spool full", fakeChecker{pingErr: errors.New("refused")}, "/readyz", 503, "unavailable", "database unreachable", fakeIntake(false)},
		{"old schema, spooling", fakeChecker{current: false}, "/readyz", 503, "unavailable", "database schema is not current; run beet migrate", fakeIntake(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			server.RegisterHealth(mux, tc.c, tc.in, nil, slog.New(slog.DiscardHandler))
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
			var body struct{ Status, Reason string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if w.Code != tc.status || body.Status != tc.wantStatus || body.Reason != tc.wantReason {
				t.Fatalf("%d %+v; want %d %s %q", w.Code, body, tc.status, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

func TestShutdownWaitsForRequests(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})
	srv := server.New(mux, slog.New(slog.DiscardHandler))
	if err := srv.Open("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(srv.URL() + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if s := <-got; s != "done" {
		t.Fatalf("in-flight request got %q", s)
	}
	if err, ok := <-srv.Err(); ok {
		t.Fatalf("Err after shutdown: %v", err)
	}
}

// TestEveryTimeoutSet: the server a listener gets bounds every phase of a
// client (headers, whole request, response, idle keep-alive), so a slow
// client cannot hold a connection for long (the behaviour is driven end to
// end, with shortened timeouts, by TestSlowClientsCutOff in internal/app).
func TestEveryTimeoutSet(t *testing.T) {
	s := server.New(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	got := s.Timeouts()
	if got != server.DefaultTimeouts {
		t.Errorf("New sets %+v, want %+v", got, server.DefaultTimeouts)
	}
	for name, d := range map[string]time.Duration{"read header": got.ReadHeader, "read": got.Read, "write": got.Write, "idle": got.Idle} {
		if d <= 0 || d > 2*time.Minute {
			t.Errorf("%s timeout %s: want a bound, and at most 2 minutes", name, d)
		}
	}
	if got.ReadHeader > got.Read {
		t.Errorf("read header timeout %s exceeds the read timeout %s", got.ReadHeader, got.Read)
	}
}

// TestRequestLogQuiet: at the default level, a page view writes one line
// for the page and none for its stylesheet, script, icon or a health
// probe, with or without the base URL's path in front; API calls and
// errors keep their line.
func TestRequestLogQuiet(t *testing.T) {
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ok := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }
	mux := http.NewServeMux()
	for _, p := range []string{"/beets", "/api/v1/beets", "/static/", "/beet/static/", "/api/v1/docs.css", "/healthz", "/readyz", "/beet/healthz"} {
		mux.HandleFunc(p, ok)
	}
	mux.HandleFunc("/static/missing.css", http.NotFound)
	srv := server.New(mux, log)
	if err := srv.Open("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	for _, p := range []string{"/beets", "/static/app.css?v=1", "/static/app.js", "/static/favicon.svg", "/static/vendor/uplot.min.js",
		"/beet/static/app.css", "/favicon.ico", "/api/v1/docs.css", "/healthz", "/readyz", "/beet/healthz", "/api/v1/beets", "/static/missing.css"} {
		resp, err := http.Get(srv.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	srv.Shutdown(context.Background())
	out := logs.String()
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		_, p, _ := strings.Cut(line, " path=")
		p, _, _ = strings.Cut(p, " ")
		paths = append(paths, p)
	}
	if want := []string{"/beets", "/api/v1/beets", "/static/missing.css"}; strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("request lines for %v, want %v:\n%s", paths, want, out)
	}
}

func TestCleanPathsServesTheCleanPath(t *testing.T) {
	var got string
	h := server.CleanPaths(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.Path }))
	for in, want := range map[string]string{
		"/api/v1/beet/bt_x":      "/api/v1/beet/bt_x",
		"//api/v1/beet/bt_x":     "/api/v1/beet/bt_x",
		"/api/v1//beets/":        "/api/v1/beets/",
		"/ping/./x/../y":         "/ping/y",
		"/.well-known/security":  "/.well-known/security",
		"/api/v1/beet%2F/x//y":   "/api/v1/beet//x//y", // escaped: left to the mux
		"//":                     "/",
		"/api/v1/beet/bt_x/..//": "/api/v1/beet/",
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", in, nil))
		if got != want {
			t.Errorf("%s served as %s, want %s", in, got, want)
		}
	}
}
