package sqlstore

import "context"

// ExecForTest runs one statement on the write pool: benchmarks seed
// millions of rows with it in one statement.
func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}

// MigrateBeforeForTest applies the migrations numbered below version.
func (db *DB) MigrateBeforeForTest(ctx context.Context, version int64) error {
	p, err := db.provider(ctx, false)
	if err != nil {
		return err
	}
	var last int64
	for _, s := range p.ListSources() {
		if s.Version < version && s.Version > last {
			last = s.Version
		}
	}
	_, err = p.UpTo(ctx, last)
	return err
}
