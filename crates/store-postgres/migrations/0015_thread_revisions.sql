-- docreview schema, version 15, PostgreSQL dialect: every comment's thread revision (the SQLite
-- backend's crates/store-sqlite/migrations/0015_thread_revisions.sql says what it is for).
ALTER TABLE comments ADD COLUMN thread_revision BIGINT NOT NULL DEFAULT 1;
