-- docreview schema, version 5, PostgreSQL dialect: the outbox, notifications, handles and
-- mentions, notification settings. The same records as the SQLite backend's version 5
-- (crates/store-sqlite/migrations/0005_outbox_notifications.sql, which says what each is for).

ALTER TABLE users ADD COLUMN handle TEXT COLLATE "C";
CREATE UNIQUE INDEX users_by_handle ON users(handle);
ALTER TABLE users ADD COLUMN email_notifications TEXT NOT NULL DEFAULT 'instant';
ALTER TABLE users ADD COLUMN digest_until BIGINT;

ALTER TABLE comments ADD COLUMN mentions JSONB;
ALTER TABLE messages ADD COLUMN mentions JSONB;

-- `payload` is TEXT, not JSONB: a webhook body must go out byte for byte as it was signed.
CREATE TABLE outbox (
    id                   TEXT COLLATE "C" PRIMARY KEY,
    sink                 TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    event_id             TEXT COLLATE "C" NOT NULL,
    target               TEXT COLLATE "C",
    payload              TEXT NOT NULL,
    status               TEXT NOT NULL,
    attempts             BIGINT NOT NULL DEFAULT 0,
    created_at           BIGINT NOT NULL,
    next_attempt_at      BIGINT NOT NULL,
    claimed_by           TEXT,
    last_response_status BIGINT,
    last_error           TEXT,
    finished_at          BIGINT,
    dedupe_key           TEXT UNIQUE
);
CREATE INDEX outbox_due ON outbox(sink, next_attempt_at) WHERE status = 'pending';
CREATE INDEX outbox_finished ON outbox(sink, finished_at) WHERE status <> 'pending';
CREATE INDEX outbox_by_target ON outbox(target, id) WHERE target IS NOT NULL;

CREATE TABLE notifications (
    id         TEXT COLLATE "C" PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    event_id   TEXT COLLATE "C" NOT NULL,
    reason     TEXT NOT NULL,
    review_id  TEXT COLLATE "C" REFERENCES reviews(id) ON DELETE CASCADE,
    comment_id TEXT COLLATE "C",
    message_id TEXT COLLATE "C",
    actor_id   TEXT COLLATE "C",
    excerpt    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    read_at    BIGINT,
    UNIQUE (event_id, user_id)
);
CREATE INDEX notifications_by_user ON notifications(user_id, created_at DESC, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_by_comment ON notifications(comment_id);
CREATE INDEX notifications_by_review ON notifications(review_id);

CREATE TABLE instance_keys (
    name       TEXT PRIMARY KEY,
    key        BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
