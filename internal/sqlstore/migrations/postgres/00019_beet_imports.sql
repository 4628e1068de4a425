-- Beets imported from another service (beet import healthchecks) remember
-- where they came from, so that running the import again finds them and
-- creates no duplicates. source_key is "healthchecks:" and the check's
-- unique_key (derived from its UUID when the export holds the UUID), the
-- same for a read-write and a read-only key's export of one check.
-- Deleting the beet forgets it: a later import creates it anew.

-- +goose Up
CREATE TABLE beet_imports (
    account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    source_key TEXT    NOT NULL,
    beet_id    BIGINT NOT NULL REFERENCES beets (id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, source_key)
);
CREATE INDEX beet_imports_beet ON beet_imports (beet_id);

-- +goose Down
DROP TABLE beet_imports;
