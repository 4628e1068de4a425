package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
)

// ingestPrefix and pingPrefix are the ingestion endpoint's paths (CONTRACT
// §1, and Healthchecks' form of it); the segment
// after it is a token, a credential.
const ingestPrefix, pingPrefix = "/api/v1/beet/", "/ping/"

// quiet says whether a request is logged at debug level when it succeeds:
// health probes (orchestrators send one every few seconds) and static
// assets (every page loads several), which would otherwise bury the one
// line per page or API call. The path may carry the base URL's path.
func quiet(path string) bool {
	switch {
	case strings.HasSuffix(path, "/healthz"), strings.HasSuffix(path, "/readyz"),
		strings.Contains(path, "/static/"), strings.HasSuffix(path, "/api/v1/docs.css"),
		strings.HasSuffix(path, "/favicon.ico"):
		return true
	}
	return false
}

// Logging logs one line per request: method, path, status, duration and
// bytes written. The path goes through RedactPath, and the query string is
// never logged, so no log line holds a whole token or API key. Successful
// ingestion requests and health probes are logged at debug level: ingestion
// is the bulk of the traffic and each request is already recorded as an
// event; static assets and health probes are noise (quiet). Server
// errors are logged at error level.
func Logging(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := recorders.Get().(*recorder)
		rec.ResponseWriter = w
		next.ServeHTTP(rec, r)
		status, bytes := rec.Status(), rec.bytes
		*rec = recorder{} // back only when the handler returned: a panic past Recover leaves it to the GC
		recorders.Put(rec)
		level := slog.LevelInfo
		switch {
		case status >= 500:
			level = slog.LevelError
		case status < 400 && (strings.HasPrefix(r.URL.Path, ingestPrefix) || strings.HasPrefix(r.URL.Path, pingPrefix) || quiet(r.URL.Path)),
			status == http.StatusNotFound && strings.HasSuffix(r.URL.Path, "/favicon.ico"): // browsers ask on their own
			level = slog.LevelDebug
		}
		if !log.Enabled(r.Context(), level) {
			return // ingestion at info level: no redaction or attributes to build
		}
		log.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method),
			slog.String("path", beet.RedactPath(r.URL.Path)),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.Int64("bytes", bytes),
		)
	})
}

// CleanPaths serves a request whose path holds empty or dot segments as its
// clean path, as nginx merges slashes by default, where net/http's mux
// answers a redirect: a base URL that ends in a slash makes
// `curl "$BASE/api/v1/beet/$TOKEN"` a request for `//api/v1/beet/…`, and
// curl in a crontab follows no redirect, so its ping was lost (and an API
// client got an HTML 307). Escaped paths and CONNECT are left to the mux.
func CleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if r.URL.RawPath != "" || r.Method == http.MethodConnect || !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
			next.ServeHTTP(w, r)
			return
		}
		clean := path.Clean("/" + p) // as the mux's cleanPath: rooted, a trailing slash kept
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if clean == p {
			next.ServeHTTP(w, r) // "/.well-known/…"
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = clean
		next.ServeHTTP(w, r2)
	})
}

// Recover turns a panic in a handler into a logged error with its stack and
// a 500 JSON answer (if nothing was written yet), so one bad request does not
// take the process down. http.ErrAbortHandler keeps its meaning.
func Recover(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.ErrorContext(r.Context(), "handler panicked",
				"method", r.Method, "path", beet.RedactPath(r.URL.Path),
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec, ok := w.(*recorder); ok && rec.status != 0 {
				return // the header is out; the client sees a cut response
			}
			httpx.WriteJSON(w, http.StatusInternalServerError,
				httpx.ErrorBody{Error: httpx.ErrorDetail{Code: beet.EINTERNAL, Message: "internal error"}})
		}()
		next.ServeHTTP(w, r)
	})
}

// recorder notes the status and size of a response for the log. One is
// taken from a pool for each request (an allocation a request otherwise);
// the handlers below it must not keep it past their return, which
// net/http asks of any ResponseWriter.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

var recorders = sync.Pool{New: func() any { return new(recorder) }}

// Status is the status written so far (200 once a body was written
// without one), or 200 if nothing was: what net/http sends for a handler
// that writes nothing. The metrics middleware reads it instead of
// wrapping the writer again.
func (r *recorder) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 { // 1xx are informational, not the answer
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush passes through, for handlers that stream.
func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
