-- Kept in step with the PostgreSQL backend's migration 3 (same version numbers). SQLite serves
-- one node, whose rate limits count in memory, so this table stays empty.
CREATE TABLE rate_counts (
    key          TEXT    NOT NULL,
    window_start INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);
