-- Accounts get a time zone (new beets take it) and a badge key (status
-- badges are signed with it); beets get tags, kept in their own table so
-- that a beet row is not rewritten to tag it and the list filters by an
-- index.

-- +goose Up
ALTER TABLE accounts ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE accounts ADD COLUMN badge_key TEXT NOT NULL DEFAULT '';
CREATE TABLE beet_tags (
    beet_id INTEGER NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    tag     TEXT    NOT NULL,
    PRIMARY KEY (beet_id, tag)
) STRICT;
CREATE INDEX beet_tags_tag ON beet_tags (tag, beet_id);

-- +goose Down
DROP TABLE beet_tags;
ALTER TABLE accounts DROP COLUMN badge_key;
ALTER TABLE accounts DROP COLUMN timezone;
