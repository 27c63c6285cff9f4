-- docreview schema, version 2: browser sessions, command-line login codes, project roles, and
-- full-text search (FTS5). The PostgreSQL backend's version 2 adds the same records; only search
-- differs in kind (`tsvector` there).

-- Only the SHA-256 of the cookie value is stored; the value never is.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    hash       BLOB NOT NULL UNIQUE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);

-- One-time codes of the command-line login, by the SHA-256 of the code.
CREATE TABLE login_codes (
    hash       BLOB PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    challenge  TEXT NOT NULL,                   -- BASE64URL(SHA-256(verifier))
    token_name TEXT NOT NULL,
    scopes     TEXT NOT NULL,                   -- comma-separated, as in tokens
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX login_codes_by_user ON login_codes(user_id);

-- Roles in projects, by user id. The primary key serves "this member's role in this document's
-- project" (every visibility check); the second index "this member's projects".
CREATE TABLE project_roles (
    project_code TEXT NOT NULL REFERENCES projects(code) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,                 -- manager | editor | viewer
    PRIMARY KEY (project_code, user_id)
);
CREATE INDEX project_roles_by_user ON project_roles(user_id, project_code, role);

-- Documents are now filtered by project, and counted per list row without reading comment rows.
CREATE INDEX reviews_by_project ON reviews(project_code) WHERE project_code IS NOT NULL;
-- "Does this member see many documents?" (search) reads link-mode documents by index.
CREATE INDEX reviews_in_link_mode ON reviews(id) WHERE access_mode = 'link';
CREATE INDEX comments_live_by_review ON comments(review_id, status) WHERE deleted_at IS NULL;

------------------------------------------------------------------------------------------------
-- Full-text search of comments and replies.
--
-- One FTS5 index over every live comment body and every live reply body (a reply only while its
-- comment is live too, so a hit never points into a thread that reads hide). The FTS5 table keeps
-- no copy of the text ("external content"): its rows are `comment_search_items`, whose integer key
-- is the index's rowid, and the text is read from `comments`/`messages` (through a view) only for
-- the rows a search ranks. An item also carries what a search filters on (document, status,
-- category) and sorts by (time), so filtering a match costs one lookup by integer key and no read
-- of a comment. Triggers keep items and index in step with every write, whatever the write path.
--
-- The tokenizer splits on anything but letters and digits, folds case and diacritics, and does
-- not stem: a word matches as typed (prefix queries do the rest). Every query word is a prefix
-- (`deploy` finds `deployment`), and FTS5 answers a prefix by merging the lists of every word
-- that starts with it before it can return a first row; prefix indexes of 1 to 4 characters turn
-- the short prefixes (the most frequent words: `a`, `the`, `fix`, `this`) into one list read
-- lazily, newest first. Longer words are rarer, and their merge is cheap.
--
-- `scope` indexes the document's key (one token per document: `review_texts.id`), so a search
-- within one document, or the few a member can see, is an intersection inside the index rather
-- than a filter over every match.

-- Each document's title and the text of its latest version. A table of its own, not columns of
-- `reviews`: that row is read by every request and rewritten by every comment, and the text may
-- be 200,000 characters. `body` NULL marks a document whose text was never indexed (it existed
-- before this migration) until the backfill sets it; its title is searchable meanwhile. Its `id`
-- is also the document's key in `comment_search.scope`.
CREATE TABLE review_texts (
    id        INTEGER PRIMARY KEY,              -- rowid in review_search
    review_id TEXT NOT NULL UNIQUE REFERENCES reviews(id) ON DELETE CASCADE,
    body      TEXT
);
CREATE INDEX review_texts_pending ON review_texts(id) WHERE body IS NULL;

CREATE TABLE comment_search_items (
    id         INTEGER PRIMARY KEY,             -- rowid in comment_search
    comment_id TEXT NOT NULL,
    message_id TEXT NOT NULL,                   -- '' for the comment's own body
    review_id  TEXT NOT NULL,
    scope      INTEGER NOT NULL,                -- the document's review_texts.id
    author_id  TEXT NOT NULL,
    created_at INTEGER NOT NULL,                -- of the comment or reply
    status     TEXT NOT NULL,                   -- of the comment (kept in step by a trigger)
    category   TEXT NOT NULL,                   -- of the comment (kept in step by a trigger)
    UNIQUE (comment_id, message_id)
);

CREATE VIEW comment_search_content (id, body, scope) AS
    SELECT i.id,
           CASE WHEN i.message_id = ''
                THEN (SELECT c.body FROM comments c WHERE c.id = i.comment_id)
                ELSE (SELECT m.body FROM messages m WHERE m.id = i.message_id) END,
           i.scope
    FROM comment_search_items i;

CREATE VIRTUAL TABLE comment_search USING fts5(
    body,
    scope,
    content = 'comment_search_content',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3 4'
);

CREATE VIEW review_search_content (id, title, body) AS
    SELECT t.id, r.title, t.body FROM review_texts t JOIN reviews r ON r.id = t.review_id;

CREATE VIRTUAL TABLE review_search USING fts5(
    title,
    body,
    content = 'review_search_content',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- What existed before: every title (documents' texts are left to the backfill,
-- `reviews_without_search_text`), every live comment and reply (oldest first, so item keys
-- follow time).
INSERT INTO review_texts (review_id, body) SELECT id, NULL FROM reviews ORDER BY created_at, id;
INSERT INTO review_search (review_search) VALUES ('rebuild');
INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
    SELECT c.id, '', c.review_id, t.id, c.author_id, c.created_at, c.status, c.category
    FROM comments c JOIN review_texts t ON t.review_id = c.review_id
    WHERE c.deleted_at IS NULL ORDER BY c.created_at, c.id;
INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
    SELECT m.comment_id, m.id, m.review_id, t.id, m.author_id, m.created_at, c.status, c.category
    FROM messages m JOIN comments c ON c.id = m.comment_id JOIN review_texts t ON t.review_id = m.review_id
    WHERE m.deleted_at IS NULL AND c.deleted_at IS NULL ORDER BY m.created_at, m.id;
INSERT INTO comment_search (comment_search) VALUES ('rebuild');

-- Keeping the index in step. An external-content FTS5 index forgets a row only when told the
-- exact text it indexed ('delete' with the old values), so every trigger that takes text out
-- passes the old body. Conditions are disjoint, so the order triggers fire in does not matter.

-- Comments.
CREATE TRIGGER comments_search_insert AFTER INSERT ON comments
WHEN new.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
        SELECT new.id, '', new.review_id, t.id, new.author_id, new.created_at, new.status, new.category
        FROM review_texts t WHERE t.review_id = new.review_id;
    INSERT INTO comment_search (rowid, body, scope)
        SELECT id, new.body, scope FROM comment_search_items WHERE comment_id = new.id AND message_id = '';
END;

CREATE TRIGGER comments_search_edit AFTER UPDATE OF body ON comments
WHEN old.deleted_at IS NULL AND new.deleted_at IS NULL AND old.body IS NOT new.body
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', id, old.body, scope FROM comment_search_items WHERE comment_id = old.id AND message_id = '';
    INSERT INTO comment_search (rowid, body, scope)
        SELECT id, new.body, scope FROM comment_search_items WHERE comment_id = new.id AND message_id = '';
END;

-- A comment deleted takes its replies out of the index with it.
CREATE TRIGGER comments_search_remove AFTER UPDATE OF deleted_at ON comments
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', i.id, CASE WHEN i.message_id = '' THEN old.body ELSE m.body END, i.scope
        FROM comment_search_items i LEFT JOIN messages m ON m.id = i.message_id
        WHERE i.comment_id = old.id;
    DELETE FROM comment_search_items WHERE comment_id = old.id;
END;

-- A comment restored brings back its live replies.
CREATE TRIGGER comments_search_restore AFTER UPDATE OF deleted_at ON comments
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
        SELECT new.id, '', new.review_id, t.id, new.author_id, new.created_at, new.status, new.category
        FROM review_texts t WHERE t.review_id = new.review_id;
    INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
        SELECT new.id, m.id, m.review_id, t.id, m.author_id, m.created_at, new.status, new.category
        FROM messages m JOIN review_texts t ON t.review_id = m.review_id
        WHERE m.comment_id = new.id AND m.deleted_at IS NULL;
    INSERT INTO comment_search (rowid, body, scope)
        SELECT i.id, CASE WHEN i.message_id = '' THEN new.body ELSE m.body END, i.scope
        FROM comment_search_items i LEFT JOIN messages m ON m.id = i.message_id
        WHERE i.comment_id = new.id;
END;

CREATE TRIGGER comments_search_status AFTER UPDATE OF status, category ON comments
WHEN old.status IS NOT new.status OR old.category IS NOT new.category
BEGIN
    UPDATE comment_search_items SET status = new.status, category = new.category
        WHERE comment_id = new.id;
END;

-- Rows go only with their document; its replies' items go with the replies (cascade).
CREATE TRIGGER comments_search_delete AFTER DELETE ON comments
WHEN old.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', id, old.body, scope FROM comment_search_items WHERE comment_id = old.id AND message_id = '';
    DELETE FROM comment_search_items WHERE comment_id = old.id AND message_id = '';
END;

-- Replies: indexed while they and their comment are live.
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages
WHEN new.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
        SELECT new.comment_id, new.id, new.review_id, t.id, new.author_id, new.created_at, c.status, c.category
        FROM comments c JOIN review_texts t ON t.review_id = new.review_id
        WHERE c.id = new.comment_id AND c.deleted_at IS NULL;
    INSERT INTO comment_search (rowid, body, scope)
        SELECT id, new.body, scope FROM comment_search_items WHERE comment_id = new.comment_id AND message_id = new.id;
END;

CREATE TRIGGER messages_search_edit AFTER UPDATE OF body ON messages
WHEN old.deleted_at IS NULL AND new.deleted_at IS NULL AND old.body IS NOT new.body
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', id, old.body, scope FROM comment_search_items WHERE comment_id = old.comment_id AND message_id = old.id;
    INSERT INTO comment_search (rowid, body, scope)
        SELECT id, new.body, scope FROM comment_search_items WHERE comment_id = new.comment_id AND message_id = new.id;
END;

CREATE TRIGGER messages_search_remove AFTER UPDATE OF deleted_at ON messages
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', id, old.body, scope FROM comment_search_items WHERE comment_id = old.comment_id AND message_id = old.id;
    DELETE FROM comment_search_items WHERE comment_id = old.comment_id AND message_id = old.id;
END;

CREATE TRIGGER messages_search_restore AFTER UPDATE OF deleted_at ON messages
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search_items (comment_id, message_id, review_id, scope, author_id, created_at, status, category)
        SELECT new.comment_id, new.id, new.review_id, t.id, new.author_id, new.created_at, c.status, c.category
        FROM comments c JOIN review_texts t ON t.review_id = new.review_id
        WHERE c.id = new.comment_id AND c.deleted_at IS NULL;
    INSERT INTO comment_search (rowid, body, scope)
        SELECT id, new.body, scope FROM comment_search_items WHERE comment_id = new.comment_id AND message_id = new.id;
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
WHEN old.deleted_at IS NULL
BEGIN
    INSERT INTO comment_search (comment_search, rowid, body, scope)
        SELECT 'delete', id, old.body, scope FROM comment_search_items WHERE comment_id = old.comment_id AND message_id = old.id;
    DELETE FROM comment_search_items WHERE comment_id = old.comment_id AND message_id = old.id;
END;

-- Documents: the title lives in `reviews`, the text in `review_texts`.
CREATE TRIGGER review_texts_search_insert AFTER INSERT ON review_texts
BEGIN
    INSERT INTO review_search (rowid, title, body)
        SELECT new.id, r.title, new.body FROM reviews r WHERE r.id = new.review_id;
END;

CREATE TRIGGER review_texts_search_update AFTER UPDATE OF body ON review_texts
WHEN old.body IS NOT new.body
BEGIN
    INSERT INTO review_search (review_search, rowid, title, body)
        SELECT 'delete', old.id, r.title, old.body FROM reviews r WHERE r.id = old.review_id;
    INSERT INTO review_search (rowid, title, body)
        SELECT new.id, r.title, new.body FROM reviews r WHERE r.id = new.review_id;
END;

CREATE TRIGGER reviews_search_title AFTER UPDATE OF title ON reviews
WHEN old.title IS NOT new.title
BEGIN
    INSERT INTO review_search (review_search, rowid, title, body)
        SELECT 'delete', t.id, old.title, t.body FROM review_texts t WHERE t.review_id = old.id;
    INSERT INTO review_search (rowid, title, body)
        SELECT t.id, new.title, t.body FROM review_texts t WHERE t.review_id = new.id;
END;

-- BEFORE: the text row is still there to name what to forget (the cascade then deletes it).
CREATE TRIGGER reviews_search_delete BEFORE DELETE ON reviews
BEGIN
    INSERT INTO review_search (review_search, rowid, title, body)
        SELECT 'delete', t.id, old.title, t.body FROM review_texts t WHERE t.review_id = old.id;
END;
