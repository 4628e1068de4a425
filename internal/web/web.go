// Package web serves Beet's dashboard: server-rendered pages (html/template,
// parsed once at start) and a few static files, all embedded in the binary,
// so the dashboard makes no request outside Beet. People sign in with an
// email and password and get a server-side session; every state-changing
// form is checked against cross-origin requests.
//
// The ingestion endpoint and the management API are not part of it: they
// keep their own authentication and never see the session or the
// cross-origin checks.
package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
	"github.com/beethq/beet/internal/service"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures the dashboard.
type Options struct {
	Service *service.Service
	Log     *slog.Logger
	// BaseURL is the public URL of Beet, for ingestion URLs and snippets;
	// an https one also marks the session cookie Secure.
	BaseURL string
	// SignupOpen lets anyone create an account (BEET_SIGNUP=open).
	SignupOpen bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, for sign-in throttling per address.
	TrustedProxies []netip.Prefix
	// UnknownTokens lists the recent requests whose token matched no beet
	// (ingestion keeps them), asking near which beet a likely typo was
	// meant for; nil shows none.
	UnknownTokens func(near func(sent string) int64) []beet.UnknownToken
}

// Handler is the dashboard.
type Handler struct {
	svc        *service.Service
	log        *slog.Logger
	baseURL    string
	prefix     string // the base URL's path ("/beet"), before every link, asset, redirect and cookie path
	secure     bool   // the base URL is https: cookies are Secure
	signupOpen bool
	proxies    []netip.Prefix
	// unknownTokens: see Options.UnknownTokens.
	unknownTokens func(near func(sent string) int64) []beet.UnknownToken
	pages         map[string]*template.Template
	static        fs.FS
	assetHash     map[string]string // static file → short content hash, for cache busting
	cop           *http.CrossOriginProtection
}

// New parses every template and hashes the static files. A template that
// does not parse is an error here, at start, never on a request.
func New(opts Options) (*Handler, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{
		svc:           opts.Service,
		log:           opts.Log,
		baseURL:       strings.TrimRight(opts.BaseURL, "/"),
		prefix:        BasePath(opts.BaseURL),
		secure:        strings.HasPrefix(opts.BaseURL, "https://"),
		signupOpen:    opts.SignupOpen,
		proxies:       opts.TrustedProxies,
		unknownTokens: opts.UnknownTokens,
		cop:           http.NewCrossOriginProtection(),
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	h.static = sub
	h.assetHash = map[string]string{}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.assetHash[p] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h.pages, err = h.parseTemplates(); err != nil {
		return nil, err
	}
	// A refused cross-origin form gets the dashboard's error page.
	h.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusForbidden, "This form was sent from another site, so Beet refused it. Open Beet's own page and try again.")
	}))
	return h, nil
}

func (h *Handler) parseTemplates() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(h.funcs()).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := path.Base(n)
		if name == "layout.html" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		pages[strings.TrimSuffix(name, ".html")] = t
	}
	return pages, nil
}

// route is one dashboard page or form. auth says whether it needs a
// signed-in session.
type route struct {
	pattern string
	auth    bool
	serve   func(w http.ResponseWriter, r *http.Request, p *reqCtx) error
}

// Register mounts the dashboard on mux. Each route is wrapped in the
// security headers and the cross-origin check; the ingestion and API
// routes registered by others are not.
func (h *Handler) Register(mux *http.ServeMux) {
	for _, rt := range h.routes() {
		mux.Handle(rt.pattern, h.wrap(rt))
	}
	mux.Handle("GET /static/", h.headers(http.HandlerFunc(h.serveStatic)))
	mux.Handle("GET /badge/{file}", h.headers(http.HandlerFunc(h.serveBadge)))
	// Everything else outside /api/ is a dashboard 404 page. No method in
	// the pattern, so it never conflicts with the API's catch-all.
	mux.Handle("/", h.headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusNotFound, "There is no page here.")
	})))
}

// Route is one dashboard page or form as tests see it.
type Route struct {
	Pattern string // "METHOD /path/{param}"
	Auth    bool   // needs a signed-in session
}

// Routes lists every page and form, for tests that must cover each one.
func (h *Handler) Routes() []Route {
	var out []Route
	for _, rt := range h.routes() {
		out = append(out, Route{rt.pattern, rt.auth})
	}
	return out
}

func (h *Handler) routes() []route {
	return []route{
		{"GET /{$}", true, h.beetList},
		{"GET /setup", false, h.setupForm},
		{"POST /setup", false, h.setup},
		{"GET /login", false, h.loginForm},
		{"POST /login", false, h.login},
		{"POST /logout", false, h.logout},
		{"GET /signup", false, h.signupForm},
		{"POST /signup", false, h.signup},
		{"GET /beets/new", true, h.newBeetForm},
		{"GET /beets/schedule-preview", true, h.schedulePreview},
		{"POST /beets", true, h.createBeet},
		{"GET /beets/{id}", true, h.beetPage},
		{"GET /beets/{id}/chart.json", true, h.chartData},
		{"GET /beets/{id}/confirm/{action}", true, h.confirmPage},
		{"POST /beets/{id}/rotate", true, h.rotate},
		{"POST /beets/{id}/pause", true, h.byID(dropBeet(h.svc.Pause), beetURL)},
		{"POST /beets/{id}/resume", true, h.byID(dropBeet(h.svc.Resume), beetURL)},
		{"POST /beets/{id}/delete", true, h.byID(h.svc.DeleteBeet, to("/"))},
		{"POST /beets/{id}/settings", true, h.saveSettings},
		{"POST /beets/{id}/detection", true, h.saveDetection},
		{"POST /beets/{id}/channels", true, h.saveBeetChannels},
		{"GET /beets/{id}/backtest", true, h.backtest},
		{"GET /account", true, h.accountPage},
		{"GET /unknown-tokens", true, h.unknownTokensPage},
		{"POST /account/keys", true, h.createKey},
		{"GET /account/keys/{key}/confirm/revoke", true, h.confirmKeyRevoke},
		{"POST /account/keys/{key}/revoke", true, h.revokeKey},
		{"POST /account/users", true, h.addUser},
		{"GET /account/users/{id}/confirm/remove", true, h.confirmUserRemove},
		{"POST /account/users/{id}/remove", true, h.removeUser},
		{"POST /account/timezone", true, h.saveAccountZone},
		{"POST /account/password", true, h.changePassword},
		{"POST /account/badges/reset", true, h.resetBadges},
		{"POST /beets/bulk", true, h.bulk},
		{"POST /beets/{id}/tags", true, h.saveTags},
		{"GET /account/channels", true, h.channelsRedirect},
		{"GET /account/channels/new", true, h.newChannelForm},
		{"POST /account/channels", true, h.createChannel},
		{"GET /account/channels/{id}", true, h.channelPage},
		{"GET /account/channels/{id}/confirm/delete", true, h.confirmChannelDelete},
		{"POST /account/channels/{id}/test", true, h.testChannel},
		{"POST /account/channels/{id}/settings", true, h.saveChannel},
		{"POST /account/channels/{id}/delete", true, h.byID(h.svc.DeleteChannel, to("/account?done=channel-deleted#channels"))},
		{"GET /account/maintenance/new", true, h.newWindowForm},
		{"POST /account/maintenance", true, h.createWindow},
		{"GET /account/maintenance/{id}/confirm/delete", true, h.confirmWindowDelete},
		{"POST /account/maintenance/{id}/delete", true, h.byID(h.svc.DeleteMaintenance, to("/account?done=window-deleted#maintenance"))},
		{"GET /account/status-pages", true, h.statusPagesPage},
		{"POST /account/status-pages", true, h.createStatusPage},
		{"GET /account/status-pages/{id}", true, h.statusPagePage},
		{"POST /account/status-pages/{id}", true, h.saveStatusPage},
		{"POST /account/status-pages/{id}/notices", true, h.createStatusNotice},
		{"POST /account/status-pages/{id}/notices/{notice}/{action}", true, h.noticeAction},
		{"GET /account/status-pages/{id}/confirm/delete", true, h.confirmStatusPageDelete},
		{"GET /account/status-pages/{id}/notices/{notice}/confirm/delete", true, h.confirmNoticeDelete},
		{"POST /account/status-pages/{id}/delete", true, h.byID(h.svc.DeleteStatusPage, to("/account/status-pages?done=deleted"))},
	}
}

// byID serves a form that acts on the object named by the path's ID, in
// the session's account (another account's object is not found, as in the
// API), and then sends the browser to next(id).
func (h *Handler) byID(act func(ctx context.Context, accountID, id int64) error, next func(id int64) string) func(http.ResponseWriter, *http.Request, *reqCtx) error {
	return func(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if err := act(r.Context(), p.session.AccountID, id); err != nil {
			return err
		}
		h.redirect(w, r, next(id))
		return nil
	}
}

// dropBeet adapts a service call that returns the changed beet to byID.
func dropBeet(f func(ctx context.Context, accountID, id int64) (*beet.Beet, error)) func(context.Context, int64, int64) error {
	return func(ctx context.Context, accountID, id int64) error {
		_, err := f(ctx, accountID, id)
		return err
	}
}

// to is a fixed next page for byID.
func to(url string) func(int64) string { return func(int64) string { return url } }

// reqCtx is what a handler knows about the request beyond http.Request.
type reqCtx struct {
	session *beet.Session // nil when not signed in
}

// sessionCookie is the cookie's name; with Secure it takes the __Host-
// prefix, which browsers accept only from HTTPS, for the whole host. Under
// a path prefix the cookie is for that path only, which __Host- forbids:
// it takes __Secure- instead.
func (h *Handler) sessionCookie(r *http.Request) string {
	switch {
	case h.secureRequest(r) && h.prefix == "":
		return "__Host-beet_session"
	case h.secureRequest(r):
		return "__Secure-beet_session"
	}
	return "beet_session"
}

// cookiePath keeps the session cookie to Beet's own pages when Beet lives
// under a path of a shared host.
func (h *Handler) cookiePath() string { return h.prefix + "/" }

// BasePath is the path of a base URL without its trailing slash
// ("https://example.com/beet/" → "/beet"; none → ""). Behind a reverse
// proxy that serves Beet under a path, every URL Beet writes starts with it.
func BasePath(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.EscapedPath(), "/")
}

// redirect sends the browser to one of the dashboard's own paths, under
// the base URL's prefix, with 303 See Other (a form's result is a GET).
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, h.prefix+path, http.StatusSeeOther)
}

func (h *Handler) secureRequest(r *http.Request) bool { return h.secure || r.TLS != nil }

func (h *Handler) wrap(rt route) http.Handler {
	return h.headers(h.cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &reqCtx{}
		if c, err := r.Cookie(h.sessionCookie(r)); err == nil {
			sess, err := h.svc.SessionFor(r.Context(), c.Value)
			switch {
			case err == nil:
				p.session = sess
			case beet.ErrorCode(err) != beet.EUNAUTHORIZED:
				h.fail(w, r, err)
				return
			default:
				h.clearCookie(w, r) // expired or unknown: stop sending it
			}
		}
		if rt.auth && p.session == nil {
			h.needSignIn(w, r)
			return
		}
		if err := rt.serve(w, r, p); err != nil {
			h.fail(w, r, err)
		}
	})))
}

// needSignIn sends a person to the setup page on a new install, or to the
// sign-in page, coming back here afterwards.
func (h *Handler) needSignIn(w http.ResponseWriter, r *http.Request) {
	need, err := h.svc.SetupNeeded(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if need {
		h.redirect(w, r, "/setup")
		return
	}
	next := ""
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		next = "?next=" + template.URLQueryEscaper(r.URL.RequestURI())
	}
	h.redirect(w, r, "/login"+next)
}

// csp allows only Beet's own scripts, styles and connections: no inline
// script or style, no framing, no plugins.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (h *Handler) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		if h.secureRequest(r) {
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	b, err := fs.ReadFile(h.static, name)
	if err != nil || name == "" {
		h.renderError(w, r, http.StatusNotFound, "There is no file here.")
		return
	}
	// URLs carry the content hash (?v=), so a new build is a new URL and
	// the files can be cached for long.
	if r.URL.Query().Get("v") == h.assetHash[name] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

// render executes a page into a buffer and only then writes it, so a
// template error becomes a whole 500 page, never half of one.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	t, ok := h.pages[page]
	if !ok {
		h.log.ErrorContext(r.Context(), "no such page template", "page", page)
		h.writeFallback500(w)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", data); err != nil {
		h.log.ErrorContext(r.Context(), "rendering a page failed", "page", page, "err", err)
		if page != "error" {
			h.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side; it has been logged.")
		} else {
			h.writeFallback500(w)
		}
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (h *Handler) writeFallback500(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte("500 internal error\n"))
}

// errorView is the error page's data.
type errorView struct {
	layoutView
	Status  int
	Message string
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", errorView{layoutView: h.layout(r, nil, http.StatusText(status)), Status: status, Message: msg})
}

// fail answers a handler's error: a domain error with its status and
// message (another account's beet is a plain 404), anything else a logged
// 500 with no details.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	switch code := beet.ErrorCode(err); code {
	case beet.ENOTFOUND:
		h.renderError(w, r, http.StatusNotFound, "There is no such page, or it belongs to another account.")
	case beet.EINTERNAL:
		h.log.ErrorContext(r.Context(), "dashboard request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		h.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side; it has been logged.")
	default:
		status := map[string]int{beet.EVALIDATION: 422, beet.EINVALID: 400, beet.ECONFLICT: 409, beet.ERATELIMITED: 429,
			beet.EUNAUTHORIZED: 401, beet.EFORBIDDEN: 403}[code]
		if status == 0 {
			status = http.StatusBadRequest
		}
		httpx.SetRetryAfter(w.Header(), err)
		h.renderError(w, r, status, beet.ErrorMessageWithField(err))
	}
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{
		Name: h.sessionCookie(r), Value: value, Path: h.cookiePath(),
		MaxAge:   int(service.SessionMax / time.Second),
		HttpOnly: true, Secure: h.secureRequest(r), SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: h.sessionCookie(r), Value: "", Path: h.cookiePath(), MaxAge: -1,
		HttpOnly: true, Secure: h.secureRequest(r), SameSite: http.SameSiteLaxMode})
}

// clientIP is the client's address, for sign-in throttling (see
// httpx.ClientIP: X-Forwarded-For only from trusted proxies).
func (h *Handler) clientIP(r *http.Request) string { return httpx.ClientIP(r, h.proxies) }
