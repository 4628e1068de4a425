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

// ExplainForTest returns the plan lines of EXPLAIN ANALYZE query, run in
// a transaction that is rolled back.
func (db *DB) ExplainForTest(ctx context.Context, query string, args ...any) ([]string, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "EXPLAIN ANALYZE "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
