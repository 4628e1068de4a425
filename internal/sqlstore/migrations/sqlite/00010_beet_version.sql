-- A version on each beet, raised by every change to its row, so ingestion
-- can keep the beets it writes in memory between commits and know from a
-- narrow read whether its copy is still the row: the trigger covers every
-- UPDATE that does not raise the version itself (the sweeper, the API, a
-- rotation, another instance, code written later).

-- +goose Up
ALTER TABLE beets ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
-- +goose StatementBegin
CREATE TRIGGER beets_version AFTER UPDATE ON beets
FOR EACH ROW WHEN NEW.version = OLD.version
BEGIN
    UPDATE beets SET version = OLD.version + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER beets_version;
ALTER TABLE beets DROP COLUMN version;
