-- Notifications: channels per account, which beets they serve, the
-- delivery outbox (one row per message, written in the transaction of the
-- flip it is about), and maintenance windows.

-- +goose Up
CREATE TABLE channels (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id     INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind           TEXT   NOT NULL,
    name           TEXT   NOT NULL,
    config         TEXT   NOT NULL, -- JSON, secrets included: never logged whole
    reminder_every INTEGER NOT NULL DEFAULT 0, -- seconds, 0 = no reminders
    failing_since  INTEGER,
    failing_reason TEXT   NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX channels_account_id ON channels (account_id);

CREATE TABLE beet_channels (
    beet_id    INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    channel_id INTEGER NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    PRIMARY KEY (beet_id, channel_id)
) STRICT;
CREATE INDEX beet_channels_channel_id ON beet_channels (channel_id);

CREATE TABLE deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id       INTEGER  NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    beet_id          INTEGER  REFERENCES beets (id) ON DELETE CASCADE,
    flip_id          INTEGER  REFERENCES flips (id) ON DELETE CASCADE,
    incident_flip_id INTEGER,
    event            TEXT    NOT NULL,
    reminder         INTEGER NOT NULL DEFAULT 0,
    flapping         INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_at          INTEGER  NOT NULL,
    created_at       INTEGER  NOT NULL,
    last_at          INTEGER,
    latency_us       INTEGER  NOT NULL DEFAULT 0,
    error            TEXT    NOT NULL DEFAULT ''
) STRICT;
-- Workers look only at pending rows, earliest first.
CREATE INDEX deliveries_pending ON deliveries (next_at) WHERE status = 'pending';
CREATE INDEX deliveries_channel_id_id ON deliveries (channel_id, id);
CREATE INDEX deliveries_beet_id_id ON deliveries (beet_id, id);
-- One reminder number per incident and channel, however many instances
-- create reminders at once.
CREATE UNIQUE INDEX deliveries_reminder ON deliveries (channel_id, incident_flip_id, reminder) WHERE reminder > 0;

CREATE TABLE maintenance_windows (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    beet_id    INTEGER REFERENCES beets (id) ON DELETE CASCADE, -- NULL: every beet of the account
    starts_at  INTEGER,
    ends_at    INTEGER,
    cron       TEXT   NOT NULL DEFAULT '',
    timezone   TEXT   NOT NULL DEFAULT '',
    duration   INTEGER NOT NULL DEFAULT 0, -- seconds
    note       TEXT   NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX maintenance_windows_account_id ON maintenance_windows (account_id);

-- +goose Down
DROP TABLE maintenance_windows;
DROP TABLE deliveries;
DROP TABLE beet_channels;
DROP TABLE channels;
