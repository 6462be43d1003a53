-- Transcript lines (ingest): who said it. `speaker` is the prefix the line
-- was written with (`user (alice)`, `assistant`), so the fact can be told
-- from its attribution; NULL for notes and flushes.
ALTER TABLE segments ADD COLUMN role TEXT;
ALTER TABLE segments ADD COLUMN sender TEXT;
ALTER TABLE segments ADD COLUMN speaker TEXT;

-- When the index first saw an entry the component never wrote (a line of
-- the operator's), by its text hash, as the id of the last segment recorded
-- by then: a trusted line that existed before an untrusted entry quoting it
-- is the original, not a copy of the quote.
CREATE TABLE IF NOT EXISTS first_seen (
  text_hash    TEXT PRIMARY KEY,
  last_segment INTEGER NOT NULL
) WITHOUT ROWID;
