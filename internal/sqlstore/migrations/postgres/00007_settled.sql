-- Flapping that settles: the worker finds (channel, beet) pairs whose last
-- flapping notice was never followed by a sent message, and adds one
-- "settled" delivery (event 'beet.settled') about the beet's latest flip.

-- +goose Up
-- Finds the newest flapping notice of each pair without reading the log.
CREATE INDEX deliveries_flapping ON deliveries (channel_id, beet_id, id) WHERE flapping;
-- One settled message per channel and flip, however many instances look
-- for settled beets at once.
CREATE UNIQUE INDEX deliveries_settled ON deliveries (channel_id, flip_id) WHERE event = 'beet.settled';

-- +goose Down
DROP INDEX deliveries_settled;
DROP INDEX deliveries_flapping;
