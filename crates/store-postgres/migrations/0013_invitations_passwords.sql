-- docreview schema, version 13, PostgreSQL dialect: invitations to join the organization and
-- password resets (DESIGN.md §8.2). The SQLite backend's version 13 adds the same records. Like
-- tokens and sessions, only the SHA-256 of each secret is stored.

CREATE TABLE invitations (
    id           TEXT COLLATE "C" PRIMARY KEY,  -- inv_
    hash         BYTEA NOT NULL UNIQUE,         -- SHA-256 of the secret in the accept link
    email        TEXT NOT NULL,                 -- lower-cased
    display_name TEXT,                          -- suggested by the inviting admin
    membership   TEXT NOT NULL,                 -- internal | external
    project_code TEXT COLLATE "C",              -- with project_role: the role given on accepting
    project_role TEXT,
    invited_by   TEXT COLLATE "C" NOT NULL,     -- the admin's user id
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    accepted_at  BIGINT,
    revoked_at   BIGINT
);
-- The pending list reads the open ones, newest first.
CREATE INDEX invitations_open ON invitations(created_at) WHERE accepted_at IS NULL AND revoked_at IS NULL;

CREATE TABLE password_resets (
    hash       BYTEA PRIMARY KEY,               -- SHA-256 of the secret in the reset link
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX password_resets_by_user ON password_resets(user_id);
