package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/beethq/beet/internal/lockfile"
)

// migrations holds one numbered set of goose SQL files per engine.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// provider returns a goose provider for db's engine. With locked, instances
// that start together apply each migration once (dialect.migrationLocker).
func (db *DB) provider(ctx context.Context, locked bool) (*goose.Provider, error) {
	fsys, err := migrationsFS(db.d)
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if locked {
		locker, err := db.d.migrationLocker(ctx, db.write)
		if err != nil {
			return nil, err
		}
		if locker != nil {
			opts = append(opts, locker)
		}
	}
	// goose writes its version table, so it always uses the writer.
	return goose.NewProvider(db.d.goose(), db.write, fsys, opts...)
}

// Migrate applies every pending migration, each in its own transaction.
// Running it again when nothing is pending does nothing.
//
// On SQLite, whose single file has no advisory lock, the run holds an
// flock on <file>.migrate.lock: two migrations of a new file started
// together (two `beet migrate`, or `serve` and a one-off command) would
// both apply the first migration, and the second fail.
func (db *DB) Migrate(ctx context.Context) error {
	if db.file != "" {
		l, err := lockfile.Wait(ctx, db.file+".migrate.lock")
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer l.Release()
	}
	p, err := db.provider(ctx, true)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// One line at info level for the lot (a new database applies every
	// migration); each one at debug level.
	var took time.Duration
	for _, r := range results {
		db.log.Debug("migration applied", "engine", db.d.name(), "version", r.Source.Version,
			"file", r.Source.Path, "duration", r.Duration)
		took += r.Duration
	}
	if len(results) > 0 {
		db.log.Info("migrations applied", "engine", db.d.name(), "count", len(results),
			"version", results[len(results)-1].Source.Version, "duration", took)
	}
	return nil
}

// SchemaCurrent reports whether every migration has been applied. It does
// not create goose's version table when it is missing.
func (db *DB) SchemaCurrent(ctx context.Context) (bool, error) {
	var exists bool
	if err := db.write.QueryRowContext(ctx, db.d.versionTableSQL()).Scan(&exists); err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	if !exists {
		return false, nil
	}
	p, err := db.provider(ctx, false)
	if err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, fmt.Errorf("schema current: %w", err)
	}
	return !pending, nil
}
