-- The provenance ledger: what the component wrote, for whom, and how much it
-- is trusted. Recorded at write time and never rebuilt from the files (text
-- can never set provenance), so it lives apart from the search index.

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per memory file the component has written to.
CREATE TABLE IF NOT EXISTS files (
  path        TEXT PRIMARY KEY,
  -- The lowest source class the file has ever received.
  file_class  TEXT NOT NULL CHECK (file_class IN ('owner', 'agent', 'untrusted', 'system')),
  -- sha-256 of the file as the component last left it.
  hash        TEXT NOT NULL,
  -- Set once an edit from outside the component is seen; never cleared.
  edited_out_of_band INTEGER NOT NULL DEFAULT 0,
  -- Set when the file already held content the ledger could not vouch for
  -- (after a loss) when it was first recorded.
  prior_lost  INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per entry the component appended (a content-hashed segment).
CREATE TABLE IF NOT EXISTS segments (
  id             INTEGER PRIMARY KEY,
  path           TEXT NOT NULL,
  text_hash      TEXT NOT NULL,   -- sha-256 of the entry text as indexed
  source_class   TEXT NOT NULL CHECK (source_class IN ('owner', 'agent', 'untrusted', 'system')),
  session_kind   TEXT NOT NULL CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent')),
  session_id     TEXT,
  observed_at    INTEGER NOT NULL,
  supersedes_key TEXT,
  written_by     TEXT NOT NULL CHECK (written_by IN ('note', 'flush', 'ingest'))
);
CREATE INDEX IF NOT EXISTS segments_by_path ON segments (path, text_hash);
CREATE INDEX IF NOT EXISTS segments_by_session ON segments (session_id);

-- Transcript messages already ingested, by session and content hash.
CREATE TABLE IF NOT EXISTS ingested (
  session_id   TEXT NOT NULL,
  message_hash TEXT NOT NULL,
  PRIMARY KEY (session_id, message_hash)
) WITHOUT ROWID;

-- Forgotten sessions: never ingested again.
CREATE TABLE IF NOT EXISTS tombstones (
  session_id   TEXT PRIMARY KEY,
  forgotten_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Memory flushes, at most one per session and compaction cycle.
CREATE TABLE IF NOT EXISTS flushes (
  session_id TEXT NOT NULL,
  cycle      INTEGER NOT NULL,
  flushed_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, cycle)
) WITHOUT ROWID;

-- Standing intents (prospective memory). Owner-created state, not derived
-- from any file, so it lives with the other durable records.
CREATE TABLE IF NOT EXISTS intents (
  id            INTEGER PRIMARY KEY,
  text          TEXT NOT NULL,
  triggers      TEXT NOT NULL DEFAULT '[]',  -- JSON array of trigger entries
  due_at        INTEGER,                     -- time-based intents
  channel       TEXT,                        -- scope: NULL = any
  sender        TEXT,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  fire_budget   INTEGER NOT NULL,
  fires         INTEGER NOT NULL DEFAULT 0,
  cooldown_ms   INTEGER NOT NULL,
  last_fired_at INTEGER,
  cancelled     INTEGER NOT NULL DEFAULT 0,
  session_id    TEXT,
  trigger_model  TEXT,                       -- embedder of trigger_vector
  trigger_vector BLOB                        -- semantic intents only
);

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
