-- What a forgotten session's outside content was: its lines are gone, but a
-- copy of one elsewhere (renamed, pasted) must keep its class, so the
-- lowering records outlive `forget` (text hashes only, no text). `id` is the
-- segment's write order.
CREATE TABLE IF NOT EXISTS forgotten_content (
  id           INTEGER PRIMARY KEY,
  text_hash    TEXT NOT NULL,
  source_class TEXT NOT NULL,
  session_kind TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS forgotten_by_hash ON forgotten_content (text_hash);
