package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/statuspage"
	"github.com/beethq/beet/internal/web"
)

// mountWeb puts the dashboard on mux. Its routes carry their own session
// and cross-origin checks; the ingestion and API routes stay outside them.
func (a *App) mountWeb(mux *http.ServeMux) error {
	proxies, err := config.ParseProxies(a.cfg.TrustedProxies)
	if err != nil {
		return err
	}
	h, err := web.New(web.Options{
		Service:        a.backend.Service,
		Log:            a.log.With("component", "web"),
		BaseURL:        a.cfg.BaseURL,
		SignupOpen:     a.cfg.SignupOpen,
		TrustedProxies: proxies,
		UnknownTokens:  a.ingest.UnknownTokensNear,
	})
	if err != nil {
		return err
	}
	h.Register(mux)
	sp, err := statuspage.New(a.backend.Service, a.log, a.cfg.BaseURL)
	if err != nil {
		return err
	}
	sp.Register(mux)
	return nil
}

// announce writes the last start-up lines: where Beet listens and, on an
// instance that serves the dashboard, where to open it: the setup page
// while there is no account, else the sign-in page. Everything else the
// start logs comes before, so the URL to open is the last line.
func (a *App) announce(ctx context.Context) {
	attrs := []any{"addr", a.server.Addr().String(), "url", a.server.URL(),
		"base_url", a.cfg.BaseURL, "database", a.backend.Store.Engine(), "role", a.cfg.Role}
	if !a.cfg.RunsHTTP() || a.degraded.Load() {
		a.log.Info("listening", attrs...)
		return
	}
	need, err := a.backend.Service.SetupNeeded(ctx)
	if err != nil {
		a.log.Warn("could not tell whether setup is needed", "err", err)
	}
	if need {
		a.log.Info("listening", attrs...)
		a.log.Info("no account yet: open the setup page to create the first one", "url", a.cfg.BaseURL+"/setup")
		return
	}
	a.log.Info("listening", append(attrs, "sign_in", a.cfg.BaseURL+"/login")...)
}

// underBasePath serves Beet whether or not the reverse proxy in front of
// it strips the base URL's path: with BEET_BASE_URL=https://example.com/beet,
// /beet/beets/1 and /beets/1 both reach the beet page. Every URL Beet
// writes carries the path (internal/web), so links work either way.
func underBasePath(baseURL string, h http.Handler) http.Handler {
	prefix := web.BasePath(baseURL)
	if prefix == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok && (rest == "" || rest[0] == '/') {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + strings.TrimPrefix(rest, "/")
			r2.URL.RawPath = ""
			h.ServeHTTP(w, r2)
			return
		}
		h.ServeHTTP(w, r)
	})
}
