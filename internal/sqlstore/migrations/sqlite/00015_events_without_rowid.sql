-- Events are kept in one B-tree on their key (received_at, id), as
-- PostgreSQL's partitioned table is, instead of a rowid table with an index
-- on id and another on received_at: every stored event was four B-tree
-- inserts and is now two (the key, and (beet_id, received_at) for a beet's
-- page and the clean-up). The key is time-ordered, so inserts append; the
-- retention clean-up scans it by time. A replayed event has the same ID and
-- receipt time, so it is still skipped. PostgreSQL needs no counterpart.
--
-- The table is rebuilt with its rows: on a large database this takes a
-- while and, until the old table is dropped, twice its space.

-- +goose Up
CREATE TABLE events_by_time (
    received_at INTEGER NOT NULL,
    id          BLOB    NOT NULL, -- beet.EventID, 16 bytes (a UUIDv7: time first)
    beet_id     INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    value       REAL,
    method      TEXT    NOT NULL,
    user_agent  TEXT    NOT NULL,
    kind        TEXT    NOT NULL DEFAULT 'ping',
    exit_code   INTEGER,
    duration_ms INTEGER,
    message     TEXT,
    PRIMARY KEY (received_at, id)
) STRICT, WITHOUT ROWID;
INSERT INTO events_by_time (received_at, id, beet_id, value, method, user_agent, kind, exit_code, duration_ms, message)
    SELECT received_at, id, beet_id, value, method, user_agent, kind, exit_code, duration_ms, message
    FROM events ORDER BY received_at, id;
DROP TABLE events;
ALTER TABLE events_by_time RENAME TO events;
CREATE INDEX events_beet_id_received_at ON events (beet_id, received_at);

-- +goose Down
CREATE TABLE events_with_rowid (
    id          BLOB    NOT NULL PRIMARY KEY,
    beet_id     INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    received_at INTEGER NOT NULL,
    value       REAL,
    method      TEXT    NOT NULL,
    user_agent  TEXT    NOT NULL,
    kind        TEXT    NOT NULL DEFAULT 'ping',
    exit_code   INTEGER,
    duration_ms INTEGER,
    message     TEXT
) STRICT;
INSERT INTO events_with_rowid (id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message)
    SELECT id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message FROM events;
DROP TABLE events;
ALTER TABLE events_with_rowid RENAME TO events;
CREATE INDEX events_beet_id_received_at ON events (beet_id, received_at);
CREATE INDEX events_received_at ON events (received_at);
