package app

import (
	"context"
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
	svc := service.New(db, service.Options{
		Now:            opts.Now,
		Log:            log.With("component", "service"),
		CleanupBatch:   cfg.CleanupBatch,
		PasswordParams: opts.PasswordParams,
	})
	return &Backend{Store: db, Service: svc}, nil
}

// Close closes the database.
func (b *Backend) Close() error { return b.Store.Close() }
