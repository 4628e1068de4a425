-- A paused beet with resume_on_event set is resumed by its next counted
-- event (Healthchecks' default for a check without manual_resume, which
-- beet import healthchecks carries over); off, it waits for POST /resume.

-- +goose Up
ALTER TABLE beets ADD COLUMN resume_on_event INTEGER NOT NULL DEFAULT 0; -- boolean 0/1

-- +goose Down
ALTER TABLE beets DROP COLUMN resume_on_event;
