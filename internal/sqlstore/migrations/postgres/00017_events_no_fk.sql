-- The events' foreign key to beets goes: PostgreSQL checked it with a
-- query per inserted event (a row lock on the beet included), on the commit
-- that acknowledges it, though AddEvents writes events only for beets it
-- holds locked in the same transaction (the cached path's UPDATE, the
-- locked path's SELECT … FOR UPDATE), so an event can never name a missing
-- beet. What the key also did, deleting a beet's events with the beet
-- (a deleted account's beets too), a trigger does now.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
        WHERE conrelid = 'events'::regclass AND contype = 'f' AND conparentid = 0
    LOOP
        EXECUTE format('ALTER TABLE events DROP CONSTRAINT %I', c);
    END LOOP;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION beets_delete_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE beet_id = OLD.id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER beets_delete_events AFTER DELETE ON beets FOR EACH ROW EXECUTE FUNCTION beets_delete_events();

-- +goose Down
DROP TRIGGER beets_delete_events ON beets;
DROP FUNCTION beets_delete_events();
DELETE FROM events WHERE NOT EXISTS (SELECT 1 FROM beets WHERE beets.id = events.beet_id);
ALTER TABLE events ADD FOREIGN KEY (beet_id) REFERENCES beets (id) ON DELETE CASCADE;
