-- Detection state beyond deadlines and models.
--
-- status_since: when each beet entered its current status (Unix µs UTC):
-- its latest flip, or its creation. Detection reads it inside the
-- ingestion transaction (how long a recovering beet was down), and people
-- see "down for 2 h".
--
-- incidents and held_beets: the global guard. When a large share of beets
-- go silent together the trouble is most likely ours or the network's, so
-- their alerts are held under one system incident instead of sent one by
-- one. open is 1 while the incident is open and NULL after, so the unique
-- index lets two sweepers open at most one.

-- +goose Up
ALTER TABLE beets ADD COLUMN status_since INTEGER NOT NULL DEFAULT 0;
UPDATE beets SET status_since = COALESCE(
	(SELECT max(at) FROM flips WHERE flips.beet_id = beets.id), beets.created_at);

-- The guard counts recent silences across all beets.
CREATE INDEX flips_down_at ON flips (at) WHERE to_status = 'down';

CREATE TABLE incidents (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    open       INTEGER UNIQUE CHECK (open = 1),
    reason     TEXT NOT NULL,
    end_reason TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE held_beets (
    incident_id INTEGER NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    beet_id     INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    PRIMARY KEY (incident_id, beet_id)
) STRICT;

-- +goose Down
DROP TABLE held_beets;
DROP TABLE incidents;
DROP INDEX flips_down_at;
ALTER TABLE beets DROP COLUMN status_since;
