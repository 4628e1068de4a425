-- The retention clean-up scans by time from a mark per plan instead of
-- visiting every beet (PostgreSQL's 00012 also partitions events by time;
-- SQLite keeps one table).
--
-- retention_marks: per plan, the instant before which the clean-up has
-- deleted every event of that plan's accounts; a pass scans from there to
-- the plan's cutoff only, through events_received_at.

-- +goose Up
CREATE TABLE retention_marks (
    plan        TEXT    NOT NULL PRIMARY KEY,
    done_before INTEGER NOT NULL -- Unix µs UTC
) STRICT;
CREATE INDEX events_received_at ON events (received_at);

-- +goose Down
DROP INDEX events_received_at;
DROP TABLE retention_marks;
