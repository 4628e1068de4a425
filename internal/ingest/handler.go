package ingest

import (
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
)

// Prefix is the path of the ingestion endpoint; the token follows it.
const Prefix = "/api/v1/beet/"

// PingPrefix is Healthchecks' path for the same endpoint: {base}/ping/{token}
// and its signals answer exactly as {base}/api/v1/beet/{token} does, so a
// Healthchecks client needs only its host changed.
const PingPrefix = "/ping/"

// Store is what the handler reads and writes besides events.
type Store interface {
	FindBeetByToken(ctx context.Context, token string) (*beet.Beet, error)
	beet.ProblemStore
	RotatedStore
}

// Options wires a Handler.
type Options struct {
	Store   Store
	Limiter beet.RateLimiter
	Writer  *Writer
	Now     func() time.Time
	Log     *slog.Logger
	// Count, if set, is told the outcome of every GET or POST (metrics).
	Count func(Outcome)
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, for the address noted with an unknown or old token.
	TrustedProxies []netip.Prefix
}

// Outcome is what became of one ingestion request.
type Outcome string

// Outcomes. BadBody is an event recorded without its value (CONTRACT §1):
// events recorded = Recorded + BadBody. NotRecorded is an event the writer
// could not take (it was closing, or the database and the spool both
// failed): still answered 200 by contract, and lost.
const (
	OutcomeRecorded       Outcome = "recorded"
	OutcomeBadBody        Outcome = "bad_body"
	OutcomeLimited        Outcome = "limited"
	OutcomeUnknownToken   Outcome = "unknown_token"
	OutcomeMalformedToken Outcome = "malformed_token"
	OutcomeBot            Outcome = "bot"
	OutcomeBadPath        Outcome = "bad_path" // a valid token followed by something that is no signal
	OutcomeNotRecorded    Outcome = "not_recorded"
)

// Handler serves GET|POST {base}/api/v1/beet/{token} as CONTRACT §1 pins
// it, and the job signals after the token (/start, /fail, /log, /{exit
// code}) under the same rules: every answer is the transparent GIF (or an
// empty 204 for a CORS preflight), and nothing about the beet or the
// event is ever in it.
type Handler struct {
	store    Store
	limiter  beet.RateLimiter
	writer   *Writer
	now      func() time.Time
	log      *slog.Logger
	problems *problemRecorder
	unknown  *unknownRecorder
	tokens   *tokenCache
	count    func(Outcome)
	proxies  []netip.Prefix
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
		tokens: newTokenCache(tokenCacheSize, tokenCacheTTL), count: o.Count, proxies: o.TrustedProxies,
	}
	if h.count == nil {
		h.count = func(Outcome) {}
	}
	h.problems = newProblemRecorder(o.Store, h.resolve, log)
	var rotated RotatedStore
	if o.Store != nil {
		rotated = o.Store
	}
	h.unknown = newUnknownRecorder(rotated, log)
	if o.Writer != nil {
		// A commit (live or a replay of the spool) that finds a token to be
		// no beet's tells the cache, so the next request with it costs no
		// commit, and the unknown-token recorder, which attributes an old
		// token's hit to its beet.
		unmatched := func(ev *beet.Event) {
			h.tokens.put(ev.Token, tokenEntry{})
			h.unknown.miss(ev.Token, ev.Addr, ev.UserAgent, ev.ReceivedAt)
		}
		o.Writer.unmatched.Store(&unmatched)
	}
	return h
}

// UnknownTokens returns the recent requests with tokens that matched no
// beet on this instance, the latest first (shape and prefix only).
func (h *Handler) UnknownTokens() []beet.UnknownToken { return h.unknown.recentTokens(nil) }

// UnknownTokensNear is UnknownTokens, with each token that may be a typo
// of a live one given to near, which answers the beet it was probably
// meant for (or 0). The token itself stays here and in near.
func (h *Handler) UnknownTokensNear(near func(sent string) int64) []beet.UnknownToken {
	return h.unknown.recentTokens(near)
}

// UnknownStats counts requests with tokens that matched no beet.
func (h *Handler) UnknownStats() *UnknownStats { return &h.unknown.stats }

// Register mounts the endpoint under both its paths. The whole prefix is
// taken, so that a malformed path (an empty token, extra segments) also
// gets the GIF.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle(Prefix, h)
	mux.Handle(PingPrefix, h)
}

// Route reports whether path is the ingestion endpoint's, under either
// prefix, and which prefix (the route, for the metrics).
func Route(path string) (prefix string, ok bool) {
	switch {
	case strings.HasPrefix(path, Prefix):
		return Prefix, true
	case strings.HasPrefix(path, PingPrefix):
		return PingPrefix, true
	}
	return "", false
}

// Close writes the problems and old-token hits still queued. Call it after
// the server drained.
func (h *Handler) Close() { h.problems.close(); h.unknown.close() }

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
	hBodyLimit    = []string{strconv.Itoa(MaxBody)}
	// hRetryAfter[s] is Retry-After for s seconds: the window is 10 s, so
	// a 429 never waits longer (a longer one, from a Redis limiter with
	// another window, is formatted).
	hRetryAfter = func() (v [11][]string) {
		for s := range v {
			v[s] = []string{strconv.Itoa(s)}
		}
		return v
	}()
)

func setCommonHeaders(hd http.Header) {
	hd["Cache-Control"] = hCache
	hd["Access-Control-Allow-Origin"] = hAnyOrigin
	hd["Access-Control-Allow-Methods"] = hMethods
	hd["Access-Control-Allow-Headers"] = hAllowHeaders
	hd["Cross-Origin-Resource-Policy"] = hCORP
	hd["X-Content-Type-Options"] = hNoSniff
	hd["Ping-Body-Limit"] = hBodyLimit
}

// writeGIF answers with the GIF. Its length is not set in the header map
// when the body is written: net/http sets Content-Length itself for a body
// written whole before the handler returns (the GIF is, 43 bytes in its
// buffer), without a map entry to clone, sort and write; for a HEAD it
// drops the body and still sets that length. A HEAD answered without a
// body written gets the length from the map.
func writeGIF(w http.ResponseWriter, status int, body bool) {
	hd := w.Header()
	hd["Content-Type"] = hGIF
	if !body {
		hd["Content-Length"] = hGIFLen
	}
	w.WriteHeader(status)
	if body {
		w.Write(transparentGIF)
	}
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, MaxBody+1); return &b }}

// ServeHTTP keeps the recorded GET's path in one small frame: the rare
// answers are methods of their own, so that a new connection's goroutine
// (each request of a burst has one) does not grow its stack for them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setCommonHeaders(w.Header())
	switch r.Method {
	case http.MethodGet, http.MethodPost:
	case http.MethodHead:
		// Healthchecks counts a HEAD on ping/<uuid> as a ping (its docs,
		// curl -I, wget --spider, its Go snippet's client.Head); under
		// /api/v1/beet/ the contract keeps HEAD for link checkers.
		if !strings.HasPrefix(r.URL.Path, PingPrefix) {
			h.otherMethod(w, r)
			return
		}
	default:
		h.otherMethod(w, r)
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		path = strings.TrimPrefix(r.URL.Path, PingPrefix)
	}
	token, suffix, _ := strings.Cut(path, "/") // a trailing slash is the plain ping, as Healthchecks' ping/<uuid>/
	now := h.now().UTC().Truncate(time.Microsecond)
	if !beet.ValidTokenShape(token) {
		h.malformed(w, r, token, now)
		return
	}
	if allowed, retry, err := h.limiter.Allow(r.Context(), token, now); err == nil && !allowed {
		h.limited(w, token, retry, now)
		return
	}

	// No lookup: the commit matches the event to the beet that has its
	// token then. Only a bt_ token a commit already found to be no beet's
	// is answered here (it can never become one; a UUID can, by an import,
	// and its miss is not cached: see tokenCache).
	addr := httpx.ClientIP(r, h.proxies)
	if ent, ok := h.tokens.get(token); ok && ent.beetID == 0 {
		h.count(OutcomeUnknownToken)
		h.unknown.miss(token, addr, r.UserAgent(), now)
		writeGIF(w, http.StatusOK, true)
		return
	}
	sig, ok := signalOf(suffix)
	if !ok {
		h.badPath(w, token, suffix, now)
		return
	}
	ua := r.UserAgent()
	if r.Method != http.MethodPost {
		if bot := previewBotOf(ua); bot != "" && h.ignoreBot(r.Context(), w, token, addr, bot, ua, now) {
			return
		}
	}
	var pb parsedBody
	if r.Method == http.MethodPost && r.Body != nil {
		pb = readBody(r.Body, declaresJSON(r.Header.Get("Content-Type")), r.Header.Get("Content-Encoding"))
	}
	var rid string
	ridOK := true
	if r.URL.RawQuery != "" {
		rid, ridOK = runID(r.URL.RawQuery)
	}

	// The event carries its token: the store records it only if a beet
	// has that token at commit. One that none has is noted by the
	// writer's unmatched hook (see New), live or replayed from the spool.
	beetID, err := h.writer.Record(beet.Event{ID: newEventID(now), Token: token, Addr: addr, ReceivedAt: now, Value: pb.value,
		Method: r.Method, UserAgent: cut(ua, beet.MaxUserAgentLen), Kind: sig.kind, ExitCode: sig.code, Message: pb.message, RID: rid})
	switch {
	case errors.Is(err, ErrNoBeet), errors.Is(err, ErrStaleToken):
		h.count(OutcomeUnknownToken)
		writeGIF(w, http.StatusOK, true)
		return
	case err != nil:
		h.notRecorded(token, err)
		writeGIF(w, http.StatusOK, true)
		return
	}
	if !ridOK {
		h.badRID(token, beetID, now)
	}
	if pb.problem != "" {
		h.badBody(token, beetID, &pb, now)
	} else {
		h.count(OutcomeRecorded)
	}
	writeGIF(w, http.StatusOK, true)
}

// badRID notes a ?rid= that is no UUID: the event was recorded without it.
//
//go:noinline
func (h *Handler) badRID(token string, beetID int64, now time.Time) {
	key := problemKey{beetID: beetID, kind: beet.ProblemBadRID}
	if beetID == 0 {
		key.token = token
	}
	h.problems.note(key, now, "rid is not a UUID; event recorded without it, so it ended no run by its ID")
}

// badBody notes a body that gave no value on the beet: the event was
// recorded without it.
//
//go:noinline
func (h *Handler) badBody(token string, beetID int64, pb *parsedBody, now time.Time) {
	h.count(OutcomeBadBody)
	key := problemKey{beetID: beetID, kind: pb.problem}
	if beetID == 0 {
		key.token = token // spooled: looked up when the note is written
	}
	h.problems.note(key, now, pb.detail)
}

//go:noinline
func (h *Handler) notRecorded(token string, err error) {
	h.count(OutcomeNotRecorded)
	h.log.Error("event not recorded", "token", beet.Redact(token), "err", err)
}

// otherMethod answers what is not a GET or POST.
//
//go:noinline
func (h *Handler) otherMethod(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodOptions:
		w.Header()["Access-Control-Max-Age"] = hMaxAge
		w.WriteHeader(http.StatusNoContent)
	case http.MethodHead: // link checkers under /api/v1/beet/: answer like a GET, record nothing
		writeGIF(w, http.StatusOK, false)
	default:
		w.Header()["Allow"] = hMethods
		writeGIF(w, http.StatusMethodNotAllowed, true)
	}
}

// malformed answers a path that cannot hold a token: no limiter, no
// database, a note in memory.
//
//go:noinline
func (h *Handler) malformed(w http.ResponseWriter, r *http.Request, token string, now time.Time) {
	h.count(OutcomeMalformedToken)
	h.unknown.malformed(token, httpx.ClientIP(r, h.proxies), r.UserAgent(), now)
	writeGIF(w, http.StatusOK, true)
}

// limited answers a request past the token's limit.
//
//go:noinline
func (h *Handler) limited(w http.ResponseWriter, token string, retry time.Duration, now time.Time) {
	h.count(OutcomeLimited)
	secs := int(math.Max(1, math.Ceil(retry.Seconds())))
	if secs < len(hRetryAfter) {
		w.Header()["Retry-After"] = hRetryAfter[secs]
	} else {
		w.Header()["Retry-After"] = []string{strconv.Itoa(secs)}
	}
	h.problems.note(problemKey{token: token, kind: beet.ProblemRateLimited}, now,
		"more than 60 requests within 10 s; the excess got 429 and was not recorded")
	writeGIF(w, http.StatusTooManyRequests, true)
}

// badPath answers a valid token followed by something that is no signal;
// it is noted on the token's beet, if it has one, off the request path.
//
//go:noinline
func (h *Handler) badPath(w http.ResponseWriter, token, suffix string, now time.Time) {
	h.problems.note(problemKey{token: token, kind: beet.ProblemBadPath}, now,
		fmt.Sprintf("nothing recorded for /%s after the token: signals are /start, /fail, /log and an exit code 0-255", cut(suffix, 40)))
	h.count(OutcomeBadPath)
	writeGIF(w, http.StatusOK, true)
}

// ignoreBot answers a link preview's GET unless the beet takes bots, and
// reports whether it did. Link previews are rare; whether the beet takes
// them is looked up (through the cache). While the database is down they
// are ignored.
//
//go:noinline
func (h *Handler) ignoreBot(ctx context.Context, w http.ResponseWriter, token, addr, bot, ua string, now time.Time) bool {
	ent, err := h.resolve(ctx, token)
	switch {
	case err == nil && ent.beetID == 0:
		h.count(OutcomeUnknownToken)
		h.unknown.miss(token, addr, ua, now)
	case err != nil || !ent.allowBots:
		if err != nil {
			h.log.Debug("beet lookup failed; ignoring a link preview", "token", beet.Redact(token), "err", err)
		} else {
			h.problems.note(problemKey{beetID: ent.beetID, kind: beet.ProblemIgnoredBot}, now, botDetail(bot, ua))
		}
		h.count(OutcomeBot)
	default:
		return false
	}
	writeGIF(w, http.StatusOK, true)
	return true
}

// botDetail is the problem noted for an ignored link preview: the bot
// that matched, then as much of the User-Agent as the detail holds (a
// browser-like one is long, and the bot's name often comes last).
func botDetail(bot, ua string) string {
	head := "ignored a link-preview request from " + bot + " (User-Agent \""
	const tail = "\"); allow bots on the beet to record them"
	ua = cut(ua, beet.MaxUserAgentLen)
	if room := beet.MaxProblemDetailLen - len(head) - len(tail); len(ua) > room {
		n := room - len("…")
		for n > 0 && !utf8.RuneStart(ua[n]) {
			n--
		}
		ua = ua[:n] + "…"
	}
	return head + ua + tail
}

// readBody reads a POST's body, up to MaxBody bytes: a longer one is kept
// cut (what follows is left unread; net/http drains or closes). A body
// sent compressed (Content-Encoding gzip or deflate) is read decompressed,
// up to the same MaxBody bytes, so a small bomb costs no more than a
// plain body; any other encoding is not read, and the beet is told.
//
//go:noinline
func readBody(body io.Reader, declaredJSON bool, encoding string) parsedBody {
	body, compressed, err := decoded(body, encoding)
	if err != nil {
		return parsedBody{problem: beet.ProblemBadBody, detail: err.Error()}
	}
	bufp := bodyPool.Get().(*[]byte)
	n, err := io.ReadFull(body, *bufp)
	pb := parseBody((*bufp)[:min(n, MaxBody)], n > MaxBody, declaredJSON)
	bodyPool.Put(bufp)
	// A cut-off stream reads as a short body; a corrupt one says so.
	if corrupt := err != nil && err != io.EOF && err != io.ErrUnexpectedEOF; compressed && corrupt && pb.problem == "" {
		pb.problem, pb.detail = beet.ProblemBadBody, fmt.Sprintf("the compressed body is corrupt after %d bytes (%v); what came before is the message", n, err)
	}
	return pb
}

// decoded is body read through its Content-Encoding, and whether that
// decompresses it.
func decoded(body io.Reader, encoding string) (io.Reader, bool, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return body, false, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, true, fmt.Errorf("body sent as gzip is not gzip (%v); event recorded without it", err)
		}
		return zr, true, nil
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			return nil, true, fmt.Errorf("body sent as deflate is not zlib data (%v); event recorded without it", err)
		}
		return zr, true, nil
	}
	return nil, false, fmt.Errorf("Content-Encoding %q is not one Beet reads (gzip, deflate, or none); event recorded without its body", cut(encoding, 20))
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
