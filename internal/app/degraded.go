package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/sqlstore"
)

// A degraded start. An ingest instance keeps pings in its spool while the
// database is away; one that (re)starts during an outage (a rollout, a
// node drain) does the same rather than wait with no port open and lose
// every ping sent to it meanwhile. It opens its store without a
// connection and serves at once; in the background it retries what a
// normal start does before it serves (migrations, the secrets' check).
// Until that has succeeded the writer's commits fail, so pings go to the
// spool in order; the API and the dashboard answer 503; /readyz answers
// 200 "degraded" while the spool has room (server.RegisterHealth), since
// taking pings is what load balancers send an ingest instance for.

// errUnchecked fails the writer's commits until the database is checked.
var errUnchecked = errors.New("the database has not answered since this instance started")

// openDegraded builds the backend on a store that has not connected, for
// checkDatabase to prepare once the database answers.
func (a *App) openDegraded(cfg config.Config, opts Options, cause error) (*Backend, error) {
	db, err := sqlstore.OpenPostgresUnconnected(cfg.DatabaseURL, a.log.With("component", "store"))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	a.degraded.Store(true)
	a.log.Warn("database unreachable at start: started degraded; pings go to the spool until it answers", "err", cause)
	return newBackend(db, cfg, Options{Now: a.now, PasswordParams: opts.PasswordParams}, a.log), nil
}

// checkDatabase runs after a degraded start: it prepares the backend as a
// normal start would, retrying with the start's back-off while the
// database is unreachable, then ends the degraded mode (the writer's next
// replay empties the spool into the database). What retrying cannot fix
// (a failed migration, a wrong secret key) stops the instance, as it
// would have stopped a normal start.
func (a *App) checkDatabase(ctx context.Context) {
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := a.backend.prepare(ctx, a.cfg)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			a.backend.Service.RefreshMaintenance(ctx) // the replay's detection reads the windows
			a.degraded.Store(false)
			a.log.Info("database reached and checked: degraded start over; the spool is replayed", "attempts", attempt)
			return
		}
		if !unreachable(err) {
			a.log.Error("database reached after a degraded start, but this instance cannot use it: stopping", "err", err)
			a.failed <- err // buffered, and sent once
			return
		}
		a.log.Debug("database still unreachable", "err", err, "attempt", attempt, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// uncheckedStore is the writer's store after a degraded start: its
// commits fail, and the events go to the spool, until checkDatabase has
// checked the database.
type uncheckedStore struct{ a *App }

func (s uncheckedStore) AddEvents(ctx context.Context, events []beet.Event, observe beet.Observer) error {
	if s.a.degraded.Load() {
		return errUnchecked
	}
	return s.a.backend.Store.AddEvents(ctx, events, observe)
}

// untilChecked answers 503 to every request but the probes and /metrics
// while the start is degraded: the API and the dashboard need the
// database, checked.
func (a *App) untilChecked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
		default:
			if a.degraded.Load() {
				w.Header().Set("Retry-After", "5")
				http.Error(w, "the database has not answered since this instance started; it takes pings only, until it does", http.StatusServiceUnavailable)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
