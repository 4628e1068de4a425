package ingest

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// Prefix is the path of the ingestion endpoint; the token follows it.
const Prefix = "/api/v1/beet/"

// Store is what the handler reads and writes besides events.
type Store interface {
	FindBeetByToken(ctx context.Context, token string) (*beet.Beet, error)
	beet.ProblemStore
}

// Options wires a Handler.
type Options struct {
	Store   Store
	Limiter beet.RateLimiter
	Writer  *Writer
	Now     func() time.Time
	Log     *slog.Logger
}

// Handler serves GET|POST {base}/api/v1/beet/{token} as CONTRACT §1 pins
// it: every answer is the transparent GIF (or an empty 204 for a CORS
// preflight), and nothing about the beet or the event is ever in it.
type Handler struct {
	store    Store
	limiter  beet.RateLimiter
	writer   *Writer
	now      func() time.Time
	log      *slog.Logger
	problems *problemRecorder
	tokens   *tokenCache
}

// New returns the ingestion handler.
func New(o Options) *Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	log := o.Log.With("component", "ingest")
	h := &Handler{
		store: o.Store, limiter: o.Limiter, writer: o.Writer, now: o.Now, log: log,
		tokens: newTokenCache(tokenCacheSize, tokenCacheTTL),
	}
	h.problems = newProblemRecorder(o.Store, h.resolve, log)
	if o.Writer != nil {
		unknown := func(token string) { h.tokens.put(token, tokenEntry{}) }
		o.Writer.unknown.Store(&unknown)
	}
	return h
}

// Register mounts the endpoint. The whole prefix is taken, so that a
// malformed path (an empty token, extra segments) also gets the GIF.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle(Prefix, h) }

// Close writes the problems still queued. Call it after the server drained.
func (h *Handler) Close() { h.problems.close() }

// Header values are shared slices, set without allocating per request.
var (
	hGIF          = []string{"image/gif"}
	hCache        = []string{"no-store, no-cache, must-revalidate, max-age=0"}
	hAnyOrigin    = []string{"*"}
	hMethods      = []string{"GET, POST, HEAD, OPTIONS"}
	hAllowHeaders = []string{"Content-Type"}
	hCORP         = []string{"cross-origin"}
	hNoSniff      = []string{"nosniff"}
	hGIFLen       = []string{strconv.Itoa(len(transparentGIF))}
	hMaxAge       = []string{"86400"}
)

func setCommonHeaders(hd http.Header) {
	hd["Cache-Control"] = hCache
	hd["Access-Control-Allow-Origin"] = hAnyOrigin
	hd["Access-Control-Allow-Methods"] = hMethods
	hd["Access-Control-Allow-Headers"] = hAllowHeaders
	hd["Cross-Origin-Resource-Policy"] = hCORP
	hd["X-Content-Type-Options"] = hNoSniff
}

func writeGIF(w http.ResponseWriter, status int, body bool) {
	hd := w.Header()
	hd["Content-Type"] = hGIF
	hd["Content-Length"] = hGIFLen
	w.WriteHeader(status)
	if body {
		w.Write(transparentGIF)
	}
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, MaxBody+1); return &b }}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setCommonHeaders(w.Header())
	switch r.Method {
	case http.MethodGet, http.MethodPost:
	case http.MethodOptions:
		w.Header()["Access-Control-Max-Age"] = hMaxAge
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodHead: // link checkers: answer like a GET, record nothing
		writeGIF(w, http.StatusOK, false)
		return
	default:
		w.Header()["Allow"] = hMethods
		writeGIF(w, http.StatusMethodNotAllowed, true)
		return
	}
	token := strings.TrimPrefix(r.URL.Path, Prefix)
	if !beet.ValidTokenShape(token) {
		writeGIF(w, http.StatusOK, true) // cannot be a token: no limiter, no database
		return
	}
	now := h.now().UTC().Truncate(time.Microsecond)
	ctx := r.Context()

	if allowed, retry, err := h.limiter.Allow(ctx, token, now); err == nil && !allowed {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Max(1, math.Ceil(retry.Seconds())))))
		h.problems.note(problemKey{token: token, kind: beet.ProblemRateLimited}, now,
			"more than 60 requests within 10 s; the excess got 429 and was not recorded")
		writeGIF(w, http.StatusTooManyRequests, true)
		return
	}

	// No lookup here: the event carries its token, and the commit stores
	// it for the beet that has the token then. The cache only answers a
	// token that a commit (or a lookup) found to be no beet's.
	ent, cached := h.tokens.get(token)
	if cached && ent.beetID == 0 {
		writeGIF(w, http.StatusOK, true) // unknown token
		return
	}
	ua := r.UserAgent()
	if r.Method == http.MethodGet && isPreviewBot(ua) {
		var err error
		if !cached {
			if ent, err = h.resolve(ctx, token); err != nil {
				h.log.Debug("beet lookup failed; bot request ignored", "token", beet.Redact(token), "err", err)
			}
		}
		if !ent.allowBots {
			if ent.beetID != 0 {
				h.problems.note(problemKey{beetID: ent.beetID, kind: beet.ProblemIgnoredBot}, now,
					"ignored a link-preview request from "+cut(ua, 80)+"; allow bots on the beet to record them")
			}
			writeGIF(w, http.StatusOK, true)
			return
		}
	}

	var pb parsedBody
	if r.Method == http.MethodPost && r.Body != nil {
		bufp := bodyPool.Get().(*[]byte)
		n, _ := io.ReadFull(r.Body, *bufp)
		pb = parseBody((*bufp)[:n])
		bodyPool.Put(bufp)
	}

	ev := beet.Event{ID: newEventID(now), BeetID: ent.beetID, Token: token, ReceivedAt: now, Value: pb.value, Method: r.Method, UserAgent: cut(ua, beet.MaxUserAgentLen)}
	if err := h.writer.Write(ev); err != nil {
		h.log.Error("event not recorded", "token", beet.Redact(token), "err", err)
	}
	if pb.problem != "" {
		key := problemKey{beetID: ent.beetID, kind: pb.problem}
		if ent.beetID == 0 {
			key.token = token
		}
		h.problems.note(key, now, pb.detail)
	}
	writeGIF(w, http.StatusOK, true)
}

// resolve finds the beet of a token, through the cache. A database error
// is returned as is and not cached.
func (h *Handler) resolve(ctx context.Context, token string) (tokenEntry, error) {
	if ent, ok := h.tokens.get(token); ok {
		return ent, nil
	}
	b, err := h.store.FindBeetByToken(ctx, token)
	var ent tokenEntry
	switch {
	case err == nil:
		ent = tokenEntry{beetID: b.ID, allowBots: b.AllowBots}
	case !beet.IsNotFound(err):
		return tokenEntry{}, err
	}
	h.tokens.put(token, ent)
	return ent, nil
}

// cut keeps at most n characters of s, as valid UTF-8.
func cut(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i]
}
