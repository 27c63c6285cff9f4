-- Write rate limits shared by every node (DESIGN.md §4.7): each node adds the writes it
-- counted to the current minute's row of each key about four times a second, and reads back
-- the total over all nodes. Rows of past minutes are deleted as new ones are counted.
CREATE TABLE rate_counts (
    key          TEXT   NOT NULL,
    window_start BIGINT NOT NULL,
    count        BIGINT NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_counts_window ON rate_counts (window_start);
