-- The deadline index moves off due_at, which ingestion rewrites with
-- almost every event: an UPDATE that changes an indexed column cannot be
-- HOT, so each event's beet UPDATE wrote a new entry in every index of
-- beets (four) and several times the WAL of a HOT update, on the commit
-- that acknowledges the event.
--
-- The sweeper now finds beets through wake_at, a lower bound of due_at
-- (wake_at <= due_at whenever due_at is set, and NULL when it is not).
-- The trigger keeps that true for every writer: it lowers wake_at when a
-- deadline moves earlier or appears, and clears it with the deadline;
-- a deadline that moves later, ingestion's usual case, leaves wake_at
-- (and so every index) alone, and the UPDATE can be HOT. The sweeper,
-- finding a beet woken before its deadline, moves wake_at up to due_at
-- (FindDueBeets), once per deadline rather than once per event, and that
-- alone does not raise the row's version: wake_at is not part of the beet
-- that ingestion keeps in memory.
--
-- fillfactor 90 leaves room on each page for the HOT copies of its rows.
--
-- The version trigger gets a WHEN clause, checked without calling PL/pgSQL:
-- ingestion raises the version itself and, as long as its deadline does
-- not move before wake_at, needs nothing of the trigger, which took a
-- PL/pgSQL call per beet per commit.

-- +goose Up
ALTER TABLE beets ADD COLUMN wake_at BIGINT;
UPDATE beets SET wake_at = due_at WHERE due_at IS NOT NULL;
CREATE INDEX beets_wake_at_id ON beets (wake_at, id) WHERE wake_at IS NOT NULL;
DROP INDEX beets_due_at_id;
ALTER TABLE beets SET (fillfactor = 90);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION beets_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wake bigint;
    only_wake boolean;
BEGIN
    IF NEW.due_at IS NULL THEN
        NEW.wake_at := NULL;
    ELSIF NEW.wake_at IS NULL OR NEW.wake_at > NEW.due_at THEN
        NEW.wake_at := NEW.due_at;
    END IF;
    IF NEW.version = OLD.version THEN
        wake := NEW.wake_at;
        NEW.wake_at := OLD.wake_at;
        only_wake := NEW IS NOT DISTINCT FROM OLD;
        NEW.wake_at := wake;
        IF NOT only_wake THEN
            NEW.version := OLD.version + 1;
        END IF;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION beets_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.wake_at := NEW.due_at;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER beets_wake BEFORE INSERT ON beets FOR EACH ROW EXECUTE FUNCTION beets_wake();
DROP TRIGGER beets_version ON beets;
CREATE TRIGGER beets_version BEFORE UPDATE ON beets FOR EACH ROW
    WHEN (NEW.version = OLD.version OR (NEW.due_at IS NULL) <> (NEW.wake_at IS NULL) OR NEW.wake_at > NEW.due_at)
    EXECUTE FUNCTION beets_version();

-- +goose Down
DROP TRIGGER beets_version ON beets;
CREATE TRIGGER beets_version BEFORE UPDATE ON beets FOR EACH ROW EXECUTE FUNCTION beets_version();
DROP TRIGGER beets_wake ON beets;
DROP FUNCTION beets_wake();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION beets_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.version = OLD.version THEN
        NEW.version := OLD.version + 1;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
ALTER TABLE beets RESET (fillfactor);
CREATE INDEX beets_due_at_id ON beets (due_at, id) WHERE due_at IS NOT NULL;
DROP INDEX beets_wake_at_id;
ALTER TABLE beets DROP COLUMN wake_at;
