-- docreview schema, version 1, PostgreSQL dialect. The SQLite backend carries the same version
-- numbers and the same tables, columns and indexes (crates/store-sqlite/migrations/0001_initial.sql).
--
-- Dialect choices:
-- * Times are UNIX milliseconds in BIGINT, revisions and sequence numbers BIGINT, flags BOOLEAN,
--   bytes (token hashes, version bodies) BYTEA.
-- * JSON columns are JSONB: the tag filter is a containment test (`tags @> '["x"]'`), and the
--   database refuses malformed JSON instead of storing it. The store reads them back as text.
-- * Identifiers use COLLATE "C": byte order, as in SQLite, so `ORDER BY updated_at DESC, id DESC`
--   and the `(updated_at, id) < (…)` page key order documents exactly as SQLite does, whatever the
--   database's locale.

CREATE TABLE users (
    id            TEXT COLLATE "C" PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,          -- stored lower-cased
    display_name  TEXT NOT NULL,
    provider      TEXT NOT NULL,                 -- local | oidc | service
    membership    TEXT NOT NULL,                 -- internal | external
    status        TEXT NOT NULL,                 -- active | suspended
    is_admin      BOOLEAN NOT NULL DEFAULT FALSE,
    password_hash TEXT,
    created_at    BIGINT NOT NULL
);

CREATE TABLE tokens (
    id           TEXT COLLATE "C" PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    hash         BYTEA NOT NULL UNIQUE,          -- SHA-256 of the value; the value is never stored
    scopes       TEXT NOT NULL,                  -- comma-separated
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX tokens_by_user ON tokens(user_id);

CREATE TABLE projects (
    code        TEXT COLLATE "C" PRIMARY KEY,
    name        TEXT,
    company     TEXT,
    status      TEXT NOT NULL,                   -- active | inactive
    in_snapshot BOOLEAN NOT NULL
);

CREATE TABLE reviews (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    title              TEXT NOT NULL,
    owner_id           TEXT COLLATE "C" NOT NULL REFERENCES users(id),
    access_mode        TEXT NOT NULL,            -- link | restricted
    tags               JSONB NOT NULL,           -- JSON array of strings
    archived           BOOLEAN NOT NULL DEFAULT FALSE,
    comments_revision  BIGINT NOT NULL,
    structure_revision BIGINT NOT NULL,
    change_seq         BIGINT NOT NULL,          -- rises with every write to the document or its children
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    latest_version_id  TEXT COLLATE "C" NOT NULL,
    structure          JSONB,                    -- JSON sections supplied at creation
    project_code       TEXT COLLATE "C" REFERENCES projects(code)
);
CREATE INDEX reviews_by_activity ON reviews(updated_at DESC, id DESC);
CREATE INDEX reviews_by_owner ON reviews(owner_id);

CREATE TABLE review_access (
    review_id TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    email     TEXT NOT NULL,
    role      TEXT NOT NULL,                     -- editor | viewer
    PRIMARY KEY (review_id, email)
);
CREATE INDEX review_access_by_email ON review_access(email);

CREATE TABLE versions (
    id          TEXT COLLATE "C" PRIMARY KEY,
    review_id   TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    label       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    source_hash TEXT NOT NULL,
    sections    JSONB NOT NULL,                  -- JSON heading sections
    html        BYTEA NOT NULL,                  -- TOASTed; never read unless selected
    UNIQUE (review_id, seq)
);

CREATE TABLE runs (
    id           TEXT COLLATE "C" PRIMARY KEY,
    review_id    TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,
    title        TEXT NOT NULL,
    version_id   TEXT COLLATE "C" NOT NULL,
    summary      TEXT,
    created_by   TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE INDEX runs_by_review ON runs(review_id);
CREATE INDEX runs_running ON runs(created_at) WHERE status = 'running';

CREATE TABLE comments (
    id         TEXT COLLATE "C" PRIMARY KEY,
    review_id  TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    author_id  TEXT COLLATE "C" NOT NULL,
    category   TEXT NOT NULL,
    status     TEXT NOT NULL,
    body       TEXT NOT NULL,
    version_id TEXT COLLATE "C" NOT NULL,
    anchor     JSONB NOT NULL,                   -- JSON Anchor
    run_id     TEXT COLLATE "C",
    created_at BIGINT NOT NULL,
    edited_at  BIGINT,
    deleted_at BIGINT
);
CREATE INDEX comments_by_review ON comments(review_id, created_at);
CREATE INDEX comments_by_run ON comments(run_id) WHERE run_id IS NOT NULL;

CREATE TABLE messages (
    id         TEXT COLLATE "C" PRIMARY KEY,
    comment_id TEXT COLLATE "C" NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    review_id  TEXT COLLATE "C" NOT NULL,
    author_id  TEXT COLLATE "C" NOT NULL,
    body       TEXT NOT NULL,
    run_id     TEXT COLLATE "C",
    created_at BIGINT NOT NULL,
    edited_at  BIGINT,
    deleted_at BIGINT
);
CREATE INDEX messages_by_comment ON messages(comment_id);
CREATE INDEX messages_by_review ON messages(review_id);
CREATE INDEX messages_by_run ON messages(run_id) WHERE run_id IS NOT NULL;

CREATE TABLE status_events (
    comment_id TEXT COLLATE "C" NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    review_id  TEXT COLLATE "C" NOT NULL,
    status     TEXT NOT NULL,
    by_id      TEXT COLLATE "C" NOT NULL,
    ts         BIGINT NOT NULL,
    PRIMARY KEY (comment_id, seq)
);
CREATE INDEX status_events_by_review ON status_events(review_id);
