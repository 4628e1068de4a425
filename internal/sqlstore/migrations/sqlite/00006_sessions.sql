-- Dashboard sessions, and the one-row table that makes the first-run setup
-- happen once. A session row holds only the SHA-256 of the cookie's random
-- ID, so a copy of the database signs nobody in.

-- +goose Up
CREATE TABLE sessions (
    id_hash      BLOB    NOT NULL PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id   INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_expires_at ON sessions (expires_at);
CREATE INDEX sessions_last_seen_at ON sessions (last_seen_at);

-- At most one row (id = 1): the setup's insert fails for a second setup.
CREATE TABLE first_run (
    id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    done_at INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE first_run;
DROP TABLE sessions;
