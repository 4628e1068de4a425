package sqlstore

import "context"

// ExecForTest runs one statement on the write pool: benchmarks seed
// millions of rows with it in one statement.
func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}
