-- Deadlines: when a beet's next check is due (Unix microseconds UTC). The
-- detector sets it when events arrive, and the sweeper takes only the beets
-- whose deadline has passed, through this partial index, instead of
-- scanning every beet.

-- +goose Up
ALTER TABLE beets ADD COLUMN due_at INTEGER;
CREATE INDEX beets_due_at ON beets (due_at) WHERE due_at IS NOT NULL;

-- +goose Down
DROP INDEX beets_due_at;
ALTER TABLE beets DROP COLUMN due_at;
