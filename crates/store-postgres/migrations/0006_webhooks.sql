-- docreview schema, version 6, PostgreSQL dialect: webhooks. The same table as the SQLite
-- backend's version 6 (crates/store-sqlite/migrations/0006_webhooks.sql, which says what each
-- column is for). `events` is JSON text, read by the decoder both backends share.

CREATE TABLE webhooks (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    url                 TEXT NOT NULL,
    events              TEXT NOT NULL,
    project_code        TEXT COLLATE "C",
    description         TEXT,
    active              BOOLEAN NOT NULL,
    secret              TEXT NOT NULL,
    previous_secret     TEXT,
    previous_expires_at BIGINT,
    created_by          TEXT COLLATE "C" NOT NULL,
    created_at          BIGINT NOT NULL
);
