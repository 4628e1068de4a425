-- Every change to a beet's row that ingestion did not make itself leaves
-- the beet's ID here (ingestion's own UPDATE raises the version, so the
-- WHEN leaves it out). Ingestion's commit reads and empties this table
-- inside its write transaction and drops those beets from its in-memory
-- copy: with nothing else able to change a row unseen (SQLite has one
-- writer at a time, and the triggers cover every process and code path),
-- the copy of a beet not listed is its row, and the commit reads no beet
-- it holds. ingest_owner names the store whose ingestion committed last:
-- a store that finds another's name there (a second store on the file, as
-- tests open) forgets every beet it holds, since that one may have written
-- them, or emptied this table, unseen. PostgreSQL keeps probing versions.

-- +goose Up
CREATE TABLE beet_changes (beet_id INTEGER NOT NULL) STRICT;
CREATE TABLE ingest_owner (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL
) STRICT;
INSERT INTO ingest_owner (id, owner) VALUES (1, '');
-- +goose StatementBegin
CREATE TRIGGER beet_changes_update AFTER UPDATE ON beets
FOR EACH ROW WHEN NEW.version = OLD.version
BEGIN
    INSERT INTO beet_changes (beet_id) VALUES (OLD.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER beet_changes_delete AFTER DELETE ON beets
FOR EACH ROW
BEGIN
    INSERT INTO beet_changes (beet_id) VALUES (OLD.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER beet_changes_insert AFTER INSERT ON beets
FOR EACH ROW
BEGIN
    INSERT INTO beet_changes (beet_id) VALUES (NEW.id);
END;
-- +goose StatementEnd

-- The list stays short without ingestion (an instance that records no
-- events while the sweeper and the API change beets): at its 4,096th row
-- it empties itself and clears the owner, so that every store forgets all
-- its beets at its next commit instead.
-- +goose StatementBegin
CREATE TRIGGER beet_changes_bound AFTER INSERT ON beet_changes
FOR EACH ROW WHEN NEW.rowid >= 4096
BEGIN
    DELETE FROM beet_changes;
    UPDATE ingest_owner SET owner = '';
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER beet_changes_bound;
DROP TRIGGER beet_changes_insert;
DROP TRIGGER beet_changes_delete;
DROP TRIGGER beet_changes_update;
DROP TABLE ingest_owner;
DROP TABLE beet_changes;
