-- docreview schema, version 5: the outbox, notifications, handles and mentions, notification
-- settings. The PostgreSQL backend's version 5 adds the same records.

-- Every user's @handle (`[a-z0-9][a-z0-9._-]{0,38}`, unique). Accounts made before this version
-- get theirs when a server starts (the rule that derives them is in core); new accounts get one
-- when they are created.
ALTER TABLE users ADD COLUMN handle TEXT;
CREATE UNIQUE INDEX users_by_handle ON users(handle);
-- How notifications reach the person by mail: instant | daily | off.
ALTER TABLE users ADD COLUMN email_notifications TEXT NOT NULL DEFAULT 'instant';
-- The end of the period the person's last daily digest covered (UNIX ms); a digest covers what
-- came after it.
ALTER TABLE users ADD COLUMN digest_until INTEGER;

-- The people a comment or reply mentions, as resolved when it was written: JSON
-- `[{ "userId", "handle" }]`; NULL for none.
ALTER TABLE comments ADD COLUMN mentions TEXT;
ALTER TABLE messages ADD COLUMN mentions TEXT;

-- The outbox: what must leave the process because of a change, written in the change's own
-- transaction and delivered after it commits (core's `outbox` module). A claim gives a row one
-- more attempt, names its claimant, and moves `next_attempt_at` to the end of the claim's lease,
-- so a row whose claimant died is due again when the lease runs out; only the claimant may
-- record the outcome.
CREATE TABLE outbox (
    id                   TEXT PRIMARY KEY,       -- evt_ (event rows: the event's id), mail_, dlv_
    sink                 TEXT NOT NULL,          -- event | mail | webhook
    kind                 TEXT NOT NULL,          -- the event type, or the kind of mail
    event_id             TEXT NOT NULL,          -- the change it comes from (webhook-id)
    target               TEXT,                   -- the webhook, or the person mailed
    payload              TEXT NOT NULL,          -- what to deliver (text: a webhook body's exact bytes)
    status               TEXT NOT NULL,          -- pending | succeeded | failed
    attempts             INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    next_attempt_at      INTEGER NOT NULL,
    claimed_by           TEXT,
    last_response_status INTEGER,
    last_error           TEXT,
    finished_at          INTEGER,
    dedupe_key           TEXT UNIQUE             -- at most one row per key (a person's digest of a day)
);
CREATE INDEX outbox_due ON outbox(sink, next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_finished ON outbox(sink, finished_at) WHERE status <> 'pending';
CREATE INDEX outbox_by_target ON outbox(target, id) WHERE target IS NOT NULL;

-- Notifications: one per event and recipient. `review_id` is NULL for notices about no
-- document (a webhook delivery that failed); `actor_id` NULL when the system reports.
CREATE TABLE notifications (
    id         TEXT PRIMARY KEY,                  -- ntf_…
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id   TEXT NOT NULL,
    reason     TEXT NOT NULL,
    review_id  TEXT REFERENCES reviews(id) ON DELETE CASCADE,
    comment_id TEXT,
    message_id TEXT,
    actor_id   TEXT,
    excerpt    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at    INTEGER,
    UNIQUE (event_id, user_id)
);
CREATE INDEX notifications_by_user ON notifications(user_id, created_at DESC, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_by_comment ON notifications(comment_id);
CREATE INDEX notifications_by_review ON notifications(review_id);

-- Keys of this installation, made once by the first server to start: the key that signs
-- capability links (unsubscribe, invitations).
CREATE TABLE instance_keys (
    name       TEXT PRIMARY KEY,
    key        BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
