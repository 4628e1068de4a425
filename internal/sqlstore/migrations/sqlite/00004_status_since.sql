-- When each beet entered its current status (Unix microseconds UTC): the
-- time of its latest flip, or its creation. Detection reads it inside the
-- ingestion transaction (how long a recovering beet was down) without a
-- lookup of its flips, and people see "down for 2 h".

-- +goose Up
ALTER TABLE beets ADD COLUMN status_since INTEGER NOT NULL DEFAULT 0;
UPDATE beets SET status_since = COALESCE(
	(SELECT max(at) FROM flips WHERE flips.beet_id = beets.id), beets.created_at);

-- +goose Down
ALTER TABLE beets DROP COLUMN status_since;
