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
