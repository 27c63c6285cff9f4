-- docreview schema, version 1. The PostgreSQL backend carries the same version numbers.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,          -- stored lower-cased
    display_name  TEXT NOT NULL,
    provider      TEXT NOT NULL,                 -- local | oidc | service
    membership    TEXT NOT NULL,                 -- internal | external
    status        TEXT NOT NULL,                 -- active | suspended
    is_admin      INTEGER NOT NULL DEFAULT 0,
    password_hash TEXT,
    created_at    INTEGER NOT NULL
);

CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    hash         BLOB NOT NULL UNIQUE,           -- SHA-256 of the value; the value is never stored
    scopes       TEXT NOT NULL,                  -- comma-separated
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX tokens_by_user ON tokens(user_id);

CREATE TABLE projects (
    code        TEXT PRIMARY KEY,
    name        TEXT,
    company     TEXT,
    status      TEXT NOT NULL,                   -- active | inactive
    in_snapshot INTEGER NOT NULL
);

CREATE TABLE reviews (
    id                 TEXT PRIMARY KEY,
    title              TEXT NOT NULL,
    owner_id           TEXT NOT NULL REFERENCES users(id),
    access_mode        TEXT NOT NULL,            -- link | restricted
    tags               TEXT NOT NULL,            -- JSON array of strings
    archived           INTEGER NOT NULL DEFAULT 0,
    comments_revision  INTEGER NOT NULL,
    structure_revision INTEGER NOT NULL,
    change_seq         INTEGER NOT NULL,         -- rises with every write to the document or its children
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    latest_version_id  TEXT NOT NULL,
    structure          TEXT,                     -- JSON sections supplied at creation
    project_code       TEXT REFERENCES projects(code)
);
CREATE INDEX reviews_by_activity ON reviews(updated_at DESC, id DESC);
CREATE INDEX reviews_by_owner ON reviews(owner_id);

CREATE TABLE review_access (
    review_id TEXT NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    email     TEXT NOT NULL,
    role      TEXT NOT NULL,                     -- editor | viewer
    PRIMARY KEY (review_id, email)
);
CREATE INDEX review_access_by_email ON review_access(email);

CREATE TABLE versions (
    id          TEXT PRIMARY KEY,
    review_id   TEXT NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    label       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    source_hash TEXT NOT NULL,
    sections    TEXT NOT NULL,                   -- JSON heading sections
    html        BLOB NOT NULL,                   -- last, so listing versions never reads it
    UNIQUE (review_id, seq)
);

CREATE TABLE runs (
    id           TEXT PRIMARY KEY,
    review_id    TEXT NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    status       TEXT NOT NULL,
    title        TEXT NOT NULL,
    version_id   TEXT NOT NULL,
    summary      TEXT,
    created_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    completed_at INTEGER
);
CREATE INDEX runs_by_review ON runs(review_id);
CREATE INDEX runs_running ON runs(created_at) WHERE status = 'running';

CREATE TABLE comments (
    id         TEXT PRIMARY KEY,
    review_id  TEXT NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    author_id  TEXT NOT NULL,
    category   TEXT NOT NULL,
    status     TEXT NOT NULL,
    body       TEXT NOT NULL,
    version_id TEXT NOT NULL,
    anchor     TEXT NOT NULL,                    -- JSON Anchor
    run_id     TEXT,
    created_at INTEGER NOT NULL,
    edited_at  INTEGER,
    deleted_at INTEGER
);
CREATE INDEX comments_by_review ON comments(review_id, created_at);
CREATE INDEX comments_by_run ON comments(run_id) WHERE run_id IS NOT NULL;

CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    review_id  TEXT NOT NULL,
    author_id  TEXT NOT NULL,
    body       TEXT NOT NULL,
    run_id     TEXT,
    created_at INTEGER NOT NULL,
    edited_at  INTEGER,
    deleted_at INTEGER
);
CREATE INDEX messages_by_comment ON messages(comment_id);
CREATE INDEX messages_by_review ON messages(review_id);
CREATE INDEX messages_by_run ON messages(run_id) WHERE run_id IS NOT NULL;

CREATE TABLE status_events (
    comment_id TEXT NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    review_id  TEXT NOT NULL,
    status     TEXT NOT NULL,
    by_id      TEXT NOT NULL,
    ts         INTEGER NOT NULL,
    PRIMARY KEY (comment_id, seq)
);
CREATE INDEX status_events_by_review ON status_events(review_id);
