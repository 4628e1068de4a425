package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// Backend is the store with the service over it: what serve runs on, and
// all that the one-off commands (accounts, apikeys, cleanup) need.
type Backend struct {
	Store   *sqlstore.DB
	Service *service.Service
	// Secrets is what opening did to the channel secrets at rest.
	Secrets sqlstore.SecretsReport
}

// OpenBackend opens the database cfg names, applies any pending migrations
// (a database made by an older version) and builds
// the service. Close releases the database.
func OpenBackend(ctx context.Context, cfg config.Config, opts Options) (*Backend, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := sqlstore.Open(ctx, cfg.DatabaseURL, log.With("component", "store"))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	b := newBackend(db, cfg, opts, log)
	if err := b.prepare(ctx, cfg); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// newBackend builds the service over db, which it does not read yet:
// prepare comes before any use.
func newBackend(db *sqlstore.DB, cfg config.Config, opts Options, log *slog.Logger) *Backend {
	svc := service.New(db, service.Options{
		Now:            opts.Now,
		Log:            log.With("component", "service"),
		CleanupBatch:   cfg.CleanupBatch,
		PasswordParams: opts.PasswordParams,
	})
	return &Backend{Store: db, Service: svc}
}

// prepare does what every start does before it serves: it applies the
// pending migrations and checks the channel secrets at rest. Run again
// after a failure, it does the rest.
func (b *Backend) prepare(ctx context.Context, cfg config.Config) error {
	if err := b.Store.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	// Channel secrets at rest: seal plain ones with BEET_SECRET_KEY, and
	// refuse to go on with a key that cannot open the sealed ones (or
	// none), rather than fail at the first alert.
	keys, err := cfg.SecretKeys()
	if err != nil {
		return err
	}
	b.Store.SetSecretKeys(keys)
	sealed, err := b.Store.SealChannelSecrets(ctx, false)
	if err != nil {
		if ke := (*sqlstore.SecretKeyError)(nil); errors.As(err, &ke) {
			return fmt.Errorf("channel secrets: %w (see docs/SECURITY.md, \"Secrets at rest\")", err)
		}
		return fmt.Errorf("channel secrets: %w", err)
	}
	b.Secrets = sealed
	return nil
}

// Close closes the database.
func (b *Backend) Close() error { return b.Store.Close() }

// openBackend is OpenBackend, retried with back-off (250 ms doubling to
// 5 s) while PostgreSQL cannot be reached, for up to cfg.ConnectWait
// (BEET_CONNECT_WAIT): an instance restarted during an outage (OOM,
// eviction, a new replica) waits for the database rather than exit at
// once and crash-loop, which would add the orchestrator's restart
// back-off to the outage. What retrying cannot fix (a refused password, a
// failed migration, a wrong secret key) fails at once. An ingest instance
// waits for nothing: it starts degraded (openDegraded).
func (a *App) openBackend(ctx context.Context, cfg config.Config, opts Options) (*Backend, error) {
	wait := cfg.ConnectWait
	deadline := time.Now().Add(wait)
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		b, err := OpenBackend(ctx, cfg, Options{Log: a.log, Now: a.now, PasswordParams: opts.PasswordParams})
		if err == nil {
			if attempt > 1 {
				a.log.Info("database reached", "attempts", attempt)
			}
			return b, nil
		}
		if unreachable(err) && cfg.Role == config.RoleIngest {
			return a.openDegraded(cfg, opts, err)
		}
		if !unreachable(err) || time.Now().Add(backoff).After(deadline) {
			if attempt > 1 {
				return nil, fmt.Errorf("%w (gave up after %d attempts in %s)", err, attempt, wait)
			}
			return nil, err
		}
		a.log.Warn("database unreachable at start; retrying", "err", err, "attempt", attempt,
			"retry_in", backoff, "until", deadline.Format(time.RFC3339))
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// unreachable reports whether err says the database server could not be
// reached or is not accepting connections yet: what waiting may fix.
func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 57P03: the database system is starting up (or shutting down).
		return pgErr.Code == "57P03"
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}
