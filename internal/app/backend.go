package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database: %w", err)
	}
	// Channel secrets at rest: seal plain ones with BEET_SECRET_KEY, and
	// refuse to go on with a key that cannot open the sealed ones (or
	// none), rather than fail at the first alert.
	keys, err := cfg.SecretKeys()
	if err != nil {
		db.Close()
		return nil, err
	}
	db.SetSecretKeys(keys)
	sealed, err := db.SealChannelSecrets(ctx, false)
	if err != nil {
		db.Close()
		if ke := (*sqlstore.SecretKeyError)(nil); errors.As(err, &ke) {
			return nil, fmt.Errorf("channel secrets: %w (see docs/SECURITY.md, \"Secrets at rest\")", err)
		}
		return nil, fmt.Errorf("channel secrets: %w", err)
	}
	svc := service.New(db, service.Options{
		Now:            opts.Now,
		Log:            log.With("component", "service"),
		CleanupBatch:   cfg.CleanupBatch,
		PasswordParams: opts.PasswordParams,
	})
	return &Backend{Store: db, Service: svc, Secrets: sealed}, nil
}

// Close closes the database.
func (b *Backend) Close() error { return b.Store.Close() }
