-- Job signals and rotated tokens.
--
-- events: what a request reported. kind is 'ping' (the plain endpoint, or
-- exit code 0), 'start', 'fail' (/fail or a non-zero exit code) or 'log';
-- exit_code is the code of /{0-255}; duration_ms is the run's length on the
-- event that ended a run (a success or failure after a start); message is
-- the text a signal carried in its body (at most 4 KiB).
--
-- beets.runs: the open run's start and the recent runs' durations, as JSON
-- ('' for a beet that never sent a start): detection reads it inside the
-- ingestion transaction, without a query of its own.
--
-- rotated_tokens: a beet's old tokens for a grace window after rotation,
-- by SHA-256 hash only, so hits with an old token can be shown on the beet
-- (they record nothing: rotation kills the old token at once).

-- +goose Up
ALTER TABLE events ADD COLUMN kind TEXT NOT NULL DEFAULT 'ping';
ALTER TABLE events ADD COLUMN exit_code SMALLINT;
ALTER TABLE events ADD COLUMN duration_ms BIGINT;
ALTER TABLE events ADD COLUMN message TEXT;

ALTER TABLE beets ADD COLUMN runs TEXT NOT NULL DEFAULT '';

CREATE TABLE rotated_tokens (
    hash            BYTEA   NOT NULL PRIMARY KEY, -- SHA-256 of the old token
    beet_id         BIGINT  NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    prefix          TEXT    NOT NULL, -- beet.Redact of the old token
    rotated_at      BIGINT  NOT NULL,
    hits            BIGINT  NOT NULL DEFAULT 0,
    last_hit_at     BIGINT,
    last_addr       TEXT    NOT NULL DEFAULT '',
    last_user_agent TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX rotated_tokens_beet_id ON rotated_tokens (beet_id, rotated_at);

-- +goose Down
DROP TABLE rotated_tokens;
ALTER TABLE beets DROP COLUMN runs;
ALTER TABLE events DROP COLUMN message;
ALTER TABLE events DROP COLUMN duration_ms;
ALTER TABLE events DROP COLUMN exit_code;
ALTER TABLE events DROP COLUMN kind;
