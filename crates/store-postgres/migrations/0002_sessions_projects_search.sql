-- docreview schema, version 2, PostgreSQL dialect: browser sessions, command-line login codes,
-- project roles, and full-text search. The SQLite backend's version 2 adds the same records
-- (crates/store-sqlite/migrations/0002_*.sql); only full-text search differs in kind: FTS5 there,
-- `tsvector` with GIN indexes here.

-- Only the SHA-256 of the cookie value is stored; the value never is.
CREATE TABLE sessions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    hash       BYTEA NOT NULL UNIQUE,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);

-- One-time codes of the command-line login, by the SHA-256 of the code.
CREATE TABLE login_codes (
    hash       BYTEA PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    challenge  TEXT NOT NULL,                   -- BASE64URL(SHA-256(verifier))
    token_name TEXT NOT NULL,
    scopes     TEXT NOT NULL,                   -- comma-separated, as in tokens
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX login_codes_by_user ON login_codes(user_id);

-- Roles in projects, by user id. The primary key serves "this member's role on this document's
-- project" (every visibility check); the second index "this member's projects".
CREATE TABLE project_roles (
    project_code TEXT COLLATE "C" NOT NULL REFERENCES projects(code) ON DELETE CASCADE,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,                 -- manager | editor | viewer
    PRIMARY KEY (project_code, user_id)
);
CREATE INDEX project_roles_by_user ON project_roles(user_id, project_code);
-- A member's project documents (visibility, and the list's project filter).
CREATE INDEX reviews_by_project ON reviews(project_code) WHERE project_code IS NOT NULL;

-- Full-text search.
--
-- A query word is a run of letters and digits (core::store::SearchTerm). PostgreSQL's default
-- text-search parser instead keeps URLs, e-mail addresses, host names, file paths, version
-- numbers and XML tags whole (`https://x.org/deploy` gives `/deploy`, never `deploy`), so indexed
-- text first has every ASCII punctuation character turned into a space: the parser then sees
-- only words, and `deploy` finds the URL. A translate(), not a regular expression: immune to the
-- database's locale, so the index means the same on every server. (The snippet code in
-- src/search.rs splits the same characters without replacing them.)
CREATE FUNCTION docreview_search_words(body TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT translate(body, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                ') $$;

-- The `simple` configuration: lower-casing only, no stemming and no stop words, so every word can
-- be found and prefixes behave as typed. Generated columns, so every write path (and every row
-- that existed before this migration) is indexed without code to forget. Deleted items are never
-- searched, so the indexes leave them out.
ALTER TABLE comments ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('simple', docreview_search_words(body))) STORED;
CREATE INDEX comments_search ON comments USING gin (search) WHERE deleted_at IS NULL;

-- Searches rank the newest matches (src/search.rs, CANDIDATES): for a word in many items the
-- planner walks these newest first and stops early, instead of reading every match.
CREATE INDEX comments_newest ON comments(created_at DESC, id DESC) WHERE deleted_at IS NULL;

ALTER TABLE messages ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('simple', docreview_search_words(body))) STORED;
CREATE INDEX messages_search ON messages USING gin (search) WHERE deleted_at IS NULL;
CREATE INDEX messages_newest ON messages(created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- Each document's title and the text of its latest version (up to SEARCH_TEXT_MAX_CHARS). A
-- table of its own rather than columns of `reviews`: that row changes with every comment, and a
-- generated column there would re-parse up to 200,000 characters on each of those updates.
-- `version_id` names the version whose text `body` holds; NULL marks a document whose text was
-- never indexed (it existed before this migration) until the backfill sets it. Titles weigh A,
-- text D, so a title match ranks above a match in the text.
CREATE TABLE review_search (
    review_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES reviews(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL,
    version_id TEXT COLLATE "C",
    document   tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', docreview_search_words(title)), 'A')
        || setweight(to_tsvector('simple', docreview_search_words(body)), 'D')
    ) STORED
);
CREATE INDEX review_search_document ON review_search USING gin (document);
CREATE INDEX review_search_pending ON review_search(review_id) WHERE version_id IS NULL;

-- Existing documents: titles searchable now, texts left to the backfill.
INSERT INTO review_search (review_id, title, body, version_id)
SELECT id, title, '', NULL FROM reviews;
