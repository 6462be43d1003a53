-- Dreaming sweeps that wrote something.
CREATE TABLE IF NOT EXISTS dream_sweeps (
  id            INTEGER PRIMARY KEY,
  at            INTEGER NOT NULL,
  consolidation TEXT NOT NULL,
  -- MEMORY.md before and after the sweep's change (pre_text NULL: the file
  -- did not exist); NULL post_hash: the sweep did not change MEMORY.md.
  pre_text      TEXT,
  pre_existed   INTEGER NOT NULL DEFAULT 1,
  post_hash     TEXT,
  rolled_back_at INTEGER
);
-- Entries a sweep promoted (or merged into an existing entry).
CREATE TABLE IF NOT EXISTS promotions (
  id             INTEGER PRIMARY KEY,
  sweep_id       INTEGER NOT NULL,
  source_path    TEXT NOT NULL,
  source_hash    TEXT NOT NULL,   -- the candidate's text hash (recall_entries)
  line_hash      TEXT NOT NULL,   -- sha-256 of the entry text in MEMORY.md
  supersedes_key TEXT,
  observed_at    INTEGER,
  merged         INTEGER NOT NULL DEFAULT 0,
  rolled_back    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS promotions_by_source ON promotions (source_hash);
