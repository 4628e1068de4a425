package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements of the hot paths (token lookup,
// event writes). Without it SQLite parses the SQL again on every call,
// which profiling showed to be about half the cost of a token lookup.
// A *sql.Stmt prepares itself again on any connection of its pool.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[stmtKey]*sql.Stmt
}

type stmtKey struct {
	pool  *sql.DB
	query string
}

// prepared returns the statement for query on pool, preparing it once.
func (db *DB) prepared(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	c := &db.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	k := stmtKey{pool, query}
	if s, ok := c.stmts[k]; ok {
		return s, nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[stmtKey]*sql.Stmt{}
	}
	c.stmts[k] = s
	return s, nil
}

// Statements for write transactions must be prepared before the
// transaction begins: on SQLite the write pool has one connection, and
// preparing through the pool from inside a transaction would wait for the
// connection the transaction holds. Inside, tx.StmtContext binds them.

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
}
