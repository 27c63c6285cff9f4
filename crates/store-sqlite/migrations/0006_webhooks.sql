-- docreview schema, version 6: webhooks (DESIGN.md §8.3). Their deliveries are the `webhook`
-- rows of the outbox (version 5: `target` is the webhook's id, `event_id` the `webhook-id`).
-- The PostgreSQL backend's version 6 adds the same table.

CREATE TABLE webhooks (
    id                  TEXT PRIMARY KEY,        -- wh_…
    url                 TEXT NOT NULL,
    events              TEXT NOT NULL,           -- JSON list of event types, or ["*"]
    project_code        TEXT,                    -- only events on this project's documents
    description         TEXT,
    active              INTEGER NOT NULL,        -- 0 once disabled (by an admin, or a 410)
    -- The signing secret (`whsec_…`), kept as is: it must sign. The previous one also signs
    -- until `previous_expires_at` (24 hours after a rotation).
    secret              TEXT NOT NULL,
    previous_secret     TEXT,
    previous_expires_at INTEGER,
    created_by          TEXT NOT NULL,
    created_at          INTEGER NOT NULL
);
