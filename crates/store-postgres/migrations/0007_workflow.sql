-- The review workflow (DESIGN.md §8.4): reviewers, decisions, finalizing, assignment, reactions.

ALTER TABLE reviews ADD COLUMN finalized_at BIGINT;
ALTER TABLE reviews ADD COLUMN finalized_by TEXT COLLATE "C";
ALTER TABLE comments ADD COLUMN assignee_id TEXT COLLATE "C";
CREATE INDEX comments_by_assignee ON comments(assignee_id) WHERE assignee_id IS NOT NULL;

CREATE TABLE reviewers (
    review_id    TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    user_id      TEXT COLLATE "C" NOT NULL,
    requested_at BIGINT NOT NULL,
    due_at       BIGINT,
    requested_by TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (review_id, user_id)
);

-- One current decision per person and document: a newer one replaces the row.
CREATE TABLE decisions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    review_id  TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    user_id    TEXT COLLATE "C" NOT NULL,
    decision   TEXT NOT NULL,
    version_id TEXT COLLATE "C" NOT NULL,
    body       TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE (review_id, user_id)
);

-- `message_id` is '' for a reaction on the comment itself, so the key stays a plain key.
CREATE TABLE reactions (
    review_id  TEXT COLLATE "C" NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
    comment_id TEXT COLLATE "C" NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    message_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    user_id    TEXT COLLATE "C" NOT NULL,
    emoji      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (comment_id, message_id, user_id, emoji)
);
CREATE INDEX reactions_by_review ON reactions(review_id);
