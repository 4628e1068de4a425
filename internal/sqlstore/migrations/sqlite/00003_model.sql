-- The learned model of a beet in auto mode (detect.RateModel, binary),
-- updated as its events are observed.

-- +goose Up
ALTER TABLE beets ADD COLUMN model BLOB;

-- +goose Down
ALTER TABLE beets DROP COLUMN model;
