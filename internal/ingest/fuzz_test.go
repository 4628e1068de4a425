package ingest_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// FuzzIngestRequest sends the ingestion handler any method, path after the
// prefix (a real token, a token with a signal suffix such as /start or /0,
// or garbage), content type, user agent and body. Whatever comes in, the
// answer is the GIF (or an empty 204/HEAD), never a 5xx, and the token is
// never in the log whole.
func FuzzIngestRequest(f *testing.F) {
	store := testdb.New(f, "sqlite")
	svc := service.New(store, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	ctx := context.Background()
	a, _, err := svc.CreateAccount(ctx, "fuzz@example.com", "password1", beet.PlanFree)
	if err != nil {
		f.Fatal(err)
	}
	b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "fuzzed"})
	if err != nil {
		f.Fatal(err)
	}
	spool, err := ingest.OpenSpool(filepath.Join(f.TempDir(), "beet.spool"), 0)
	if err != nil {
		f.Fatal(err)
	}
	logBuf := &testlog.Buffer{}
	log := testlog.New(logBuf)
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{Log: log})
	h := ingest.New(ingest.Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w, Log: log})
	f.Cleanup(func() { w.Close(); h.Close(); spool.Close() })

	for _, s := range []struct {
		method, tail, ctype, body, ua string
		token                         bool
	}{
		{"GET", "", "", "", "curl/8", true},
		{"POST", "", "application/json", `{"value": 12.5}`, "", true},
		{"POST", "", "application/x-www-form-urlencoded", "value=12.5", "", true},
		{"POST", "", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"value\"\r\n\r\n1\r\n--x--", "", true},
		{"POST", "", "text/plain;charset=UTF-8", `{"value":1}`, "Mozilla/5.0", true},
		{"POST", "/start", "", "", "", true},
		{"POST", "/fail", "text/plain", "exit 1", "", true},
		{"POST", "/log", "application/octet-stream", "\x00\xff", "", true},
		{"GET", "/0", "", "", "", true},
		{"GET", "/255", "", "", "", true},
		{"HEAD", "", "", "", "", true},
		{"OPTIONS", "", "", "", "", true},
		{"DELETE", "", "", "", "", true},
		{"GET", "bt_" + strings.Repeat("A", 22), "", "", "", false},
		{"GET", "../../api/v1/beets", "", "", "", false},
		{"GET", "", "", "", "Slackbot-LinkExpanding 1.0", true},
		{"POST", "", "application/json", strings.Repeat("9", 5000), "", true},
	} {
		f.Add(s.method, s.token, s.tail, s.ctype, []byte(s.body), s.ua)
	}
	f.Fuzz(func(t *testing.T, method string, withToken bool, tail, ctype string, body []byte, ua string) {
		req, err := http.NewRequest(method, "http://beet.test/", bytes.NewReader(body))
		if err != nil {
			return // not a method net/http would hand a handler
		}
		path := ingest.Prefix + tail
		if withToken {
			path = ingest.Prefix + b.Token + tail
		}
		req.URL.Path = path
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("User-Agent", ua)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusMethodNotAllowed, http.StatusTooManyRequests:
			if method != http.MethodHead && !bytes.Equal(rec.Body.Bytes(), gif43) {
				t.Fatalf("%s %q: status %d with body %q, want the GIF", method, path, rec.Code, rec.Body.Bytes())
			}
			if ct := rec.Header().Get("Content-Type"); ct != "image/gif" {
				t.Fatalf("%s %q: Content-Type %q", method, path, ct)
			}
		case http.StatusNoContent:
			if method != http.MethodOptions {
				t.Fatalf("%s %q: 204 for a method other than OPTIONS", method, path)
			}
		default:
			t.Fatalf("%s %q: status %d", method, path, rec.Code)
		}
		if strings.Contains(logBuf.String(), b.Token) {
			t.Fatalf("the token is in the log whole:\n%s", logBuf.String())
		}
	})
}
