package sqlstore

import (
	"errors"
	"io/fs"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds the little that differs between the engines once the DDL is
// in per-engine migration files.
type dialect interface {
	name() string
	goose() goose.Dialect
	// migrationsDir is the folder of the embedded migrations FS.
	migrationsDir() string
	// skipLocked ends a row-claiming subquery: on PostgreSQL it lets
	// several instances delete disjoint rows at once; SQLite has a single
	// writer and needs nothing.
	skipLocked() string
	// versionTableSQL answers one boolean: does goose's table exist?
	versionTableSQL() string
	isUnique(err error) bool
	isForeignKey(err error) bool
}

type sqliteDialect struct{}

func (sqliteDialect) name() string          { return "sqlite" }
func (sqliteDialect) goose() goose.Dialect  { return goose.DialectSQLite3 }
func (sqliteDialect) migrationsDir() string { return "migrations/sqlite" }

func (sqliteDialect) skipLocked() string { return "" }
func (sqliteDialect) isUnique(err error) bool {
	return sqliteCode(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}
func (sqliteDialect) isForeignKey(err error) bool {
	return sqliteCode(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY)
}
func (sqliteDialect) versionTableSQL() string {
	return `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version')`
}

// sqliteCode reports whether err carries one of the extended result codes.
func sqliteCode(err error, codes ...int) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, c := range codes {
		if e.Code() == c {
			return true
		}
	}
	return false
}

type postgresDialect struct{}

func (postgresDialect) name() string          { return "postgres" }
func (postgresDialect) goose() goose.Dialect  { return goose.DialectPostgres }
func (postgresDialect) migrationsDir() string { return "migrations/postgres" }

func (postgresDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }
func (postgresDialect) isUnique(err error) bool {
	return pgCode(err, "23505") // unique_violation
}
func (postgresDialect) isForeignKey(err error) bool {
	return pgCode(err, "23503") // foreign_key_violation
}
func (postgresDialect) versionTableSQL() string {
	// to_regclass follows search_path, as goose's own queries do.
	return `SELECT to_regclass('goose_db_version') IS NOT NULL`
}

func pgCode(err error, code string) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == code
}

// migrationsFS returns d's migration files with the .sql files at the root,
// as goose expects.
func migrationsFS(d dialect) (fs.FS, error) {
	return fs.Sub(migrations, d.migrationsDir())
}
