// Package api serves Beet's management API (/api/v1/…, CONTRACT §2): JSON
// in and out, authenticated by account API keys. Handlers are thin: they
// decode, call the service, and encode.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
	"github.com/beethq/beet/internal/service"
)

// Handler serves the management API.
type Handler struct {
	svc  *service.Service
	log  *slog.Logger
	docs []byte // the rendered API reference (docs.go)
}

// SetBasePath renders the API reference for a Beet served under a path
// (BEET_BASE_URL=https://example.com/beet), so its links carry the path.
func (h *Handler) SetBasePath(prefix string) error {
	b, err := renderDocs(prefix)
	if err != nil {
		return err
	}
	h.docs = b
	return nil
}

// New returns the management API over svc.
func New(svc *service.Service, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{svc: svc, log: log.With("component", "api")}
	h.docs, _ = renderDocs("") // TestDocsRender proves the document renders
	return h
}

// route is one authenticated API call. The table is the single list of
// calls: it is registered on the mux and checked against the OpenAPI
// document by a test.
type route struct {
	method, pattern string
	serve           func(w http.ResponseWriter, r *http.Request, accountID int64) error
}

func (h *Handler) routes() []route {
	return []route{
		{"GET", "/api/v1/account", h.getAccount},
		{"PATCH", "/api/v1/account", h.updateAccount},
		{"POST", "/api/v1/beets", h.createBeet},
		{"GET", "/api/v1/beets", h.listBeets},
		{"GET", "/api/v1/beets/{id}", h.getBeet},
		{"PATCH", "/api/v1/beets/{id}", h.updateBeet},
		{"DELETE", "/api/v1/beets/{id}", h.deleteBeet},
		{"POST", "/api/v1/beets/{id}/rotate-token", h.rotateToken},
		{"POST", "/api/v1/beets/{id}/pause", h.pause},
		{"POST", "/api/v1/beets/{id}/resume", h.resume},
		{"GET", "/api/v1/beets/{id}/events", h.listEvents},
		{"GET", "/api/v1/beets/{id}/flips", h.listFlips},
		{"GET", "/api/v1/beets/{id}/problems", beetList("problems", h.svc.Problems, toProblemJSON)},
		{"GET", "/api/v1/beets/{id}/rotated-tokens", beetList("rotated_tokens", h.svc.RotatedTokens, toRotatedTokenJSON)},
		{"GET", "/api/v1/incidents", h.listIncidents},
		{"GET", "/api/v1/beets/{id}/channels", h.getBeetChannels},
		{"PUT", "/api/v1/beets/{id}/channels", h.setBeetChannels},
		{"POST", "/api/v1/channels", h.createChannel},
		{"GET", "/api/v1/channels", accountList("channels", h.svc.Channels, toChannelJSON)},
		{"GET", "/api/v1/channels/{id}", accountGet("channel", h.svc.Channel, toChannelJSON)},
		{"PATCH", "/api/v1/channels/{id}", h.updateChannel},
		{"DELETE", "/api/v1/channels/{id}", accountDelete("channel", h.svc.DeleteChannel)},
		{"POST", "/api/v1/channels/{id}/test", h.testChannel},
		{"GET", "/api/v1/channels/{id}/deliveries", h.listDeliveries},
		{"POST", "/api/v1/maintenance", h.createMaintenance},
		{"GET", "/api/v1/maintenance", accountList("maintenance", h.svc.MaintenanceWindows, h.toMaintenanceJSON)},
		{"DELETE", "/api/v1/maintenance/{id}", accountDelete("maintenance window", h.svc.DeleteMaintenance)},
		{"POST", "/api/v1/status-pages", h.createStatusPage},
		{"GET", "/api/v1/status-pages", accountList("status_pages", h.svc.StatusPages, toStatusPageJSON)},
		{"GET", "/api/v1/status-pages/{id}", accountGet("status page", h.svc.StatusPage, toStatusPageJSON)},
		{"PATCH", "/api/v1/status-pages/{id}", h.updateStatusPage},
		{"DELETE", "/api/v1/status-pages/{id}", accountDelete("status page", h.svc.DeleteStatusPage)},
		{"POST", "/api/v1/status-pages/{id}/notices", h.createNotice},
		{"GET", "/api/v1/status-pages/{id}/notices", h.listNotices},
		{"PATCH", "/api/v1/status-pages/{id}/notices/{notice}", h.updateNotice},
		{"DELETE", "/api/v1/status-pages/{id}/notices/{notice}", h.deleteNotice},
	}
}

// Patterns lists every authenticated call as "METHOD /pattern", in the
// order they are registered, for tests that must cover each one.
func (h *Handler) Patterns() []string {
	var out []string
	for _, rt := range h.routes() {
		out = append(out, rt.method+" "+rt.pattern)
	}
	return out
}

// Register mounts the API on mux, with JSON answers for unknown paths and
// wrong methods under /api/v1/ so clients never get an HTML or text error.
func (h *Handler) Register(mux *http.ServeMux) {
	allowed := map[string][]string{}
	for _, rt := range h.routes() {
		mux.Handle(rt.method+" "+rt.pattern, h.authenticated(rt.method, rt.serve))
		allowed[rt.pattern] = append(allowed[rt.pattern], rt.method)
	}
	mux.HandleFunc("GET /api/v1/openapi.json", serveOpenAPI)
	mux.HandleFunc("GET /api/v1/docs", h.serveDocs)
	mux.HandleFunc("GET /api/v1/docs.css", serveDocsCSS)
	allowed["/api/v1/openapi.json"] = []string{"GET"}
	for pattern, methods := range allowed {
		sort.Strings(methods)
		allow := strings.Join(methods, ", ")
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			httpx.Error(w, r, h.log, &beet.Error{Code: "method_not_allowed", Message: r.Method + " is not allowed here; use " + allow})
		})
	}
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		httpx.Error(w, r, h.log, beet.Errorf(beet.ENOTFOUND, "no API call at %s %s", r.Method, r.URL.Path))
	})
}

// authenticated resolves the bearer API key to an account and runs serve;
// any error it returns becomes a JSON error response. A read-only key is
// refused here, before serve, on every route whose method is not GET, so a
// new route is covered without its handler knowing about scopes.
func (h *Handler) authenticated(method string, serve func(http.ResponseWriter, *http.Request, int64) error) http.Handler {
	writes := method != http.MethodGet
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, err := h.authenticate(r.Context(), r)
		if err == nil && writes && k.ReadOnly {
			err = beet.Errorf(beet.EFORBIDDEN, "API key %s is read-only: %s needs a read-write key", k.Prefix, method)
		}
		if err == nil {
			if k.ReadOnly {
				r = r.WithContext(context.WithValue(r.Context(), readOnlyKey{}, true))
			}
			err = serve(w, r, k.AccountID)
		}
		if err != nil {
			httpx.Error(w, r, h.log, err)
		}
	})
}

// readOnlyKey marks a request made with a read-only API key in its
// context, so that what it reads can leave out the beets' tokens.
type readOnlyKey struct{}

// showsTokens says whether the request's key may read ingestion tokens:
// only read-write keys may, since a token records events.
func showsTokens(r *http.Request) bool {
	ro, _ := r.Context().Value(readOnlyKey{}).(bool)
	return !ro
}

func (h *Handler) authenticate(ctx context.Context, r *http.Request) (*beet.APIKey, error) {
	auth := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(auth, " ")
	if auth == "" {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "send an API key: Authorization: Bearer bk_…")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "use the Bearer scheme: Authorization: Bearer bk_…")
	}
	return h.svc.APIKeyFor(ctx, strings.TrimSpace(key))
}

// pathID reads the {id} path value. IDs that are not numbers name nothing,
// so they are not found rather than invalid.
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, beet.Errorf(beet.ENOTFOUND, "beet %q not found", beet.RedactPath(r.PathValue("id"))) // a token pasted here is not echoed whole
	}
	return id, nil
}

// queryLimit reads the limit query parameter: absent or empty is 0 (the
// default page), and a limit given must be from 1 to beet.MaxPageLimit
// (the service takes 0 as the default, which limit=0 must not mean).
func queryLimit(r *http.Request) (int, error) {
	n, err := queryInt(r, "limit")
	if err == nil && r.URL.Query().Get("limit") != "" && (n < 1 || n > beet.MaxPageLimit) {
		return 0, beet.FieldError("limit", "must be from 1 to %d", beet.MaxPageLimit)
	}
	return n, err
}

// queryInt reads an optional integer query parameter.
func queryInt(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, beet.FieldError(name, "%q is not a whole number", s)
	}
	return n, nil
}
