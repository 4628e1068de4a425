package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/beethq/beet/internal/httpx"
)

// Checker is what readiness asks of the store; beet.Store satisfies it.
type Checker interface {
	Ping(ctx context.Context) error
	SchemaCurrent(ctx context.Context) (bool, error)
}

// Intake is what readiness asks of an instance that takes pings: whether
// it can still keep them while the database is unreachable (the spool is
// writable and not full). nil on an instance without ingestion.
type Intake interface {
	CanSpool() bool
}

// readyTimeout bounds one readiness check, so a hung database makes the
// probe fail rather than hang.
const readyTimeout = 3 * time.Second

type healthBody struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// RegisterHealth mounts GET /healthz (the process answers) and GET /readyz
// (the instance can do its work). An instance with ingestion (in non-nil)
// stays ready through a database outage while its spool takes pings: the
// load balancers route on /readyz, and pulling every instance out would
// lose the pings the spool exists to keep. It then answers 200 with status
// "degraded" and the outage as its reason. Readiness reasons are fixed
// phrases: the probe may be public, so driver errors go to the log.
//
// stopping, if not nil, reports a shutdown under way: /readyz then answers
// 503 "shutting down" while the instance still serves, so load balancers
// stop sending to it before it closes its listener.
func RegisterHealth(mux *http.ServeMux, c Checker, in Intake, stopping func() bool, log *slog.Logger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpx.WriteJSON(w, http.StatusOK, healthBody{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if stopping != nil && stopping() {
			httpx.WriteJSON(w, http.StatusServiceUnavailable, healthBody{Status: "unavailable", Reason: "shutting down"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		reason := notReady(ctx, c, log)
		if reason == reasonDBDown && in != nil && in.CanSpool() {
			httpx.WriteJSON(w, http.StatusOK, healthBody{Status: "degraded", Reason: reasonDBDown + "; pings are spooled"})
			return
		}
		if reason != "" {
			httpx.WriteJSON(w, http.StatusServiceUnavailable, healthBody{Status: "unavailable", Reason: reason})
			return
		}
		httpx.WriteJSON(w, http.StatusOK, healthBody{Status: "ready"})
	})
}

const reasonDBDown = "database unreachable"

func notReady(ctx context.Context, c Checker, log *slog.Logger) string {
	if err := c.Ping(ctx); err != nil {
		log.WarnContext(ctx, "readiness: database unreachable", "err", err)
		return reasonDBDown
	}
	ok, err := c.SchemaCurrent(ctx)
	if err != nil {
		log.WarnContext(ctx, "readiness: schema check failed", "err", err)
		return "schema check failed"
	}
	if !ok {
		return "database schema is not current; run beet migrate"
	}
	return ""
}
