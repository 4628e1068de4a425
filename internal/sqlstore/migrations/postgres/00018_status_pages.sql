-- Public status pages and the notices accounts write on them. A page's
-- tags and beet IDs are kept in its row, space-separated: a page is always
-- read whole and never looked up by them. The slug is unique across
-- accounts because it alone names the page in its URL. A notice's number
-- counts within its page: it is the notice's public name, so the page
-- shows no database ID.

-- +goose Up
CREATE TABLE status_pages (
    id          BIGSERIAL PRIMARY KEY,
    account_id  BIGINT  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    slug        TEXT    NOT NULL UNIQUE,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    tags        TEXT    NOT NULL DEFAULT '',
    beet_ids    TEXT    NOT NULL DEFAULT '',
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
CREATE INDEX status_pages_account_id ON status_pages (account_id, id);

CREATE TABLE status_notices (
    id          BIGSERIAL PRIMARY KEY,
    page_id     BIGINT  NOT NULL REFERENCES status_pages (id) ON DELETE CASCADE,
    number      INTEGER NOT NULL,
    title       TEXT    NOT NULL,
    body        TEXT    NOT NULL DEFAULT '',
    severity    TEXT    NOT NULL,
    resolved_at BIGINT,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    UNIQUE (page_id, number)
);

-- +goose Down
DROP TABLE status_notices;
DROP TABLE status_pages;
