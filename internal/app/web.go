package app

import (
	"context"
	"net/http"

	"github.com/beethq/beet/internal/config"
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
		UnknownTokens:  a.ingest.UnknownTokens,
	})
	if err != nil {
		return err
	}
	h.Register(mux)
	return nil
}

// announceSetup prints the setup page's URL when the database has no
// account yet, so a new user knows where to start.
func (a *App) announceSetup(ctx context.Context) {
	need, err := a.backend.Service.SetupNeeded(ctx)
	if err != nil {
		a.log.Warn("could not tell whether setup is needed", "err", err)
		return
	}
	if need {
		a.log.Info("no account yet: open the setup page to create the first one", "url", a.cfg.BaseURL+"/setup")
	}
}
