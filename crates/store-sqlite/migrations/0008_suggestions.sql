-- Suggestions that apply (DESIGN.md §8.5): a comment's replacement text for its passage, and
-- why a status changed (`applied`, with the version the suggestion went into).

ALTER TABLE comments ADD COLUMN suggestion TEXT;
ALTER TABLE status_events ADD COLUMN reason TEXT;
ALTER TABLE status_events ADD COLUMN version_id TEXT;
