-- docreview schema, version 15: every comment's thread revision, a counter that rises by one in
-- each write that changes the comment or its thread (its fields, a reply added, edited or
-- cancelled, a status event, a new anchor). A write may name the revision its author saw
-- (`baseThreadRevision`); the store checks it in the write's own transaction, so a write
-- conflicts only with changes to that thread. Existing comments start at 1, as new ones do.
ALTER TABLE comments ADD COLUMN thread_revision INTEGER NOT NULL DEFAULT 1;
