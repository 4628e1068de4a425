package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds one numbered set of goose SQL files per engine.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// provider returns a goose provider for db's engine. On PostgreSQL it takes
// a session advisory lock around the run, so instances that start together
// apply each migration once; the lock ID is derived from the database and
// schema, so separate schemas (tests, tenants) do not wait for each other.
func (db *DB) provider(ctx context.Context, locked bool) (*goose.Provider, error) {
	fsys, err := migrationsFS(db.d)
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if locked && db.d.name() == "postgres" {
		var database, schema string
		if err := db.write.QueryRowContext(ctx, `SELECT current_database(), current_schema()`).Scan(&database, &schema); err != nil {
			return nil, err
		}
		h := fnv.New64a()
		h.Write([]byte("beet migrations " + database + "." + schema))
		// Poll every second for up to 5 minutes; goose's default period
		// of 5 s makes every waiting instance start 5 s late.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64())), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	// goose writes its version table, so it always uses the writer.
	return goose.NewProvider(db.d.goose(), db.write, fsys, opts...)
}

// Migrate applies every pending migration, each in its own transaction.
// Running it again when nothing is pending does nothing.
func (db *DB) Migrate(ctx context.Context) error {
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
