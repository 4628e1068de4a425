-- Initial schema. Timestamps are Unix microseconds UTC in INTEGER columns so
-- that the same SQL text works on both engines with exact precision.
-- STRICT tables make SQLite refuse a value of the wrong type, as PostgreSQL
-- would, and AUTOINCREMENT keeps a deleted row's ID from being reused.

-- +goose Up
CREATE TABLE accounts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    plan       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email         TEXT    NOT NULL UNIQUE, -- stored lower-cased
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX users_account_id ON users (account_id);

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    prefix     TEXT    NOT NULL,
    hash       BLOB    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT;
CREATE INDEX api_keys_account_id ON api_keys (account_id);

CREATE TABLE beets (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    description   TEXT    NOT NULL DEFAULT '',
    token         TEXT    NOT NULL UNIQUE,
    status        TEXT    NOT NULL,
    status_reason TEXT    NOT NULL DEFAULT '',
    timezone      TEXT    NOT NULL,
    detection     TEXT    NOT NULL, -- JSON
    allow_bots    INTEGER NOT NULL DEFAULT 0, -- boolean 0/1
    last_event_at INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX beets_account_id ON beets (account_id);

CREATE TABLE events (
    id          BLOB    NOT NULL PRIMARY KEY, -- beet.EventID, 16 bytes
    beet_id     INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    received_at INTEGER NOT NULL,
    value       REAL,
    method      TEXT    NOT NULL,
    user_agent  TEXT    NOT NULL
) STRICT;
CREATE INDEX events_beet_id_received_at ON events (beet_id, received_at);

CREATE TABLE problems (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    beet_id INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    at      INTEGER NOT NULL,
    kind    TEXT    NOT NULL,
    detail  TEXT    NOT NULL
) STRICT;
CREATE INDEX problems_beet_id_id ON problems (beet_id, id);

CREATE TABLE flips (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    beet_id     INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    observed    REAL,
    expected    REAL
) STRICT;
CREATE INDEX flips_beet_id_at ON flips (beet_id, at);

-- +goose Down
DROP TABLE flips;
DROP TABLE problems;
DROP TABLE events;
DROP TABLE beets;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE accounts;
