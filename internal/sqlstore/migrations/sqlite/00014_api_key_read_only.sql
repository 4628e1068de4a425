-- A key is read-only or read-write (docs/SECURITY.md "API key scopes"):
-- a read-only key can call every GET of the management API and nothing
-- that changes state. Keys made before this migration keep writing.

-- +goose Up
ALTER TABLE api_keys ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0; -- boolean 0/1

-- +goose Down
ALTER TABLE api_keys DROP COLUMN read_only;
