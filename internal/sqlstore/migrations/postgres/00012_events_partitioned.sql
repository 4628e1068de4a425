-- Events partitioned by time (issue 15's capacity model: at 1,000,000 beets
-- the table passes 200 GB on any plan). events becomes a table partitioned
-- BY RANGE (received_at), one partition a calendar month (UTC), named
-- events_YYYYMM, plus events_default for anything outside them, so an
-- insert never fails for want of a partition. Retention then drops whole
-- months past the longest retention instead of deleting row by row.
--
-- A unique constraint on a partitioned table must contain the partition
-- key, so the primary key becomes (received_at, id): a replayed event keeps
-- its received_at (the spool stores it), so replays stay idempotent, and
-- the key doubles as the time index the retention clean-up scans.
--
-- beet_events_partition(m) creates the month holding m if it is missing,
-- moving the default partition's rows of that month into it (PostgreSQL
-- refuses a new partition whose rows sit in the default one). The
-- partition job calls it ahead of time, under an advisory lock.
--
-- retention_marks: per plan, the instant before which the clean-up has
-- deleted every event of that plan's accounts; a pass scans from there to
-- the plan's cutoff only, so its cost follows what expired, not the number
-- of beets.
--
-- Existing rows are copied inside this migration (one transaction): on a
-- large table, plan the downtime or run it first on a copy.

-- +goose Up
ALTER TABLE events RENAME TO events_unpartitioned;
ALTER INDEX events_pkey RENAME TO events_unpartitioned_pkey;
ALTER INDEX events_beet_id_received_at RENAME TO events_unpartitioned_beet_id_received_at;

CREATE TABLE events (
    id          BYTEA            NOT NULL, -- beet.EventID, 16 bytes
    beet_id     BIGINT           NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    received_at BIGINT           NOT NULL,
    value       DOUBLE PRECISION,
    method      TEXT             NOT NULL,
    user_agent  TEXT             NOT NULL,
    kind        TEXT             NOT NULL DEFAULT 'ping',
    exit_code   SMALLINT,
    duration_ms BIGINT,
    message     TEXT,
    PRIMARY KEY (received_at, id)
) PARTITION BY RANGE (received_at);
CREATE INDEX events_beet_id_received_at ON events (beet_id, received_at);
CREATE TABLE events_default PARTITION OF events DEFAULT;

-- +goose StatementBegin
CREATE FUNCTION beet_events_partition(m timestamp) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    start timestamp := date_trunc('month', m);
    lo    bigint    := (extract(epoch FROM start) * 1000000)::bigint;
    hi    bigint    := (extract(epoch FROM start + interval '1 month') * 1000000)::bigint;
    name  text      := 'events_' || to_char(start, 'YYYYMM');
BEGIN
    IF to_regclass(format('%I.%I', current_schema(), name)) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.events INCLUDING DEFAULTS)', current_schema(), name, current_schema());
    EXECUTE format('WITH moved AS (DELETE FROM %I.events_default WHERE received_at >= %s AND received_at < %s RETURNING *)
        INSERT INTO %I.%I SELECT * FROM moved', current_schema(), lo, hi, current_schema(), name);
    EXECUTE format('ALTER TABLE %I.events ATTACH PARTITION %I.%I FOR VALUES FROM (%s) TO (%s)',
        current_schema(), current_schema(), name, lo, hi);
    RETURN true;
END $$;
-- +goose StatementEnd

-- The months that hold events, and this month and the next three.
SELECT beet_events_partition(m) FROM (
    SELECT DISTINCT date_trunc('month', to_timestamp(received_at / 1000000.0) AT TIME ZONE 'UTC') AS m
    FROM events_unpartitioned
    UNION
    SELECT date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => k) FROM generate_series(0, 3) AS k
) AS months ORDER BY m;

INSERT INTO events (id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message)
    SELECT id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message
    FROM events_unpartitioned;
DROP TABLE events_unpartitioned;

CREATE TABLE retention_marks (
    plan        TEXT   NOT NULL PRIMARY KEY,
    done_before BIGINT NOT NULL -- Unix µs UTC
);

-- +goose Down
DROP TABLE retention_marks;
ALTER TABLE events RENAME TO events_partitioned;
ALTER INDEX events_pkey RENAME TO events_partitioned_pkey;
ALTER INDEX events_beet_id_received_at RENAME TO events_partitioned_beet_id_received_at;
CREATE TABLE events (
    id          BYTEA            NOT NULL PRIMARY KEY,
    beet_id     BIGINT           NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    received_at BIGINT           NOT NULL,
    value       DOUBLE PRECISION,
    method      TEXT             NOT NULL,
    user_agent  TEXT             NOT NULL,
    kind        TEXT             NOT NULL DEFAULT 'ping',
    exit_code   SMALLINT,
    duration_ms BIGINT,
    message     TEXT
);
CREATE INDEX events_beet_id_received_at ON events (beet_id, received_at);
INSERT INTO events SELECT id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message
    FROM events_partitioned ON CONFLICT (id) DO NOTHING;
DROP TABLE events_partitioned;
DROP FUNCTION beet_events_partition(timestamp);
