-- A version on each beet, raised by every change to its row, so ingestion
-- can keep the beets it writes in memory between commits and know from a
-- narrow read whether its copy is still the row: the trigger covers every
-- UPDATE that does not raise the version itself (the sweeper, the API, a
-- rotation, another instance, code written later).

-- +goose Up
ALTER TABLE beets ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
-- +goose StatementBegin
CREATE FUNCTION beets_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.version = OLD.version THEN
        NEW.version := OLD.version + 1;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER beets_version BEFORE UPDATE ON beets FOR EACH ROW EXECUTE FUNCTION beets_version();

-- +goose Down
DROP TRIGGER beets_version ON beets;
DROP FUNCTION beets_version();
ALTER TABLE beets DROP COLUMN version;
