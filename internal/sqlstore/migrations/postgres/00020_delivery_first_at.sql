-- When a delivery was first attempted (microseconds since the epoch;
-- NULL until its first claim): the 24-hour give-up counts from it, not
-- from the flip, so an alert written late (after a worker outage) still
-- gets its day of retries. Rows from before this migration count from
-- created_at, as they did.

-- +goose Up
ALTER TABLE deliveries ADD COLUMN first_at BIGINT;

-- +goose Down
ALTER TABLE deliveries DROP COLUMN first_at;
