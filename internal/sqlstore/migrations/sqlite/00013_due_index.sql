-- The sweeper reads the passed deadlines in (due_at, id) order, a batch at
-- a time; an index on due_at alone made every batch read all passed
-- deadlines and sort them (10,000 rows a batch in a mass silence of 1% of
-- a million beets). The index holds only watched beets (a deadline set),
-- so an idle tick is one probe at its start.

-- +goose Up
CREATE INDEX beets_due_at_id ON beets (due_at, id) WHERE due_at IS NOT NULL;
DROP INDEX beets_due_at;

-- +goose Down
CREATE INDEX beets_due_at ON beets (due_at) WHERE due_at IS NOT NULL;
DROP INDEX beets_due_at_id;
