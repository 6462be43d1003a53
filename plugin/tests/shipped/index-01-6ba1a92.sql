-- The search index: a projection of the Markdown memory files, rebuilt from
-- them whenever it is missing, corrupt or of another schema version.
-- `{tokenizer}` is replaced with the configured FTS5 tokenizer.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per indexed memory file.
CREATE TABLE sources (
  path       TEXT PRIMARY KEY,
  tier       TEXT NOT NULL CHECK (tier IN ('curated', 'daily', 'note')),
  file_date  TEXT,                -- YYYY-MM-DD of a daily note
  hash       TEXT NOT NULL,       -- sha-256 of the file's bytes as indexed
  size       INTEGER NOT NULL,
  mtime_ms   INTEGER NOT NULL,
  line_count INTEGER NOT NULL,
  problems   TEXT NOT NULL DEFAULT '[]'  -- JSON array of strings
) WITHOUT ROWID;

-- Entries (list items, paragraphs) and windows (overlapping spans of a
-- daily note, for neighbouring-line context).
CREATE TABLE chunks (
  id              INTEGER PRIMARY KEY,
  path            TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('entry', 'window')),
  start_line      INTEGER NOT NULL,
  end_line        INTEGER NOT NULL,
  heading         TEXT,
  text            TEXT NOT NULL,
  hash            TEXT NOT NULL,   -- sha-256 of the embedded text
  embedding       BLOB,            -- little-endian f32, L2-normalised
  embedding_model TEXT             -- provider/model the embedding came from
);
CREATE INDEX chunks_by_path ON chunks (path, start_line);
CREATE INDEX chunks_by_model ON chunks (kind, embedding_model);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, heading, kind UNINDEXED,
  tokenize = '{tokenizer}'
);
-- Body text outweighs the heading it sits under.
INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.25)');

-- Provenance of each entry: columns no text can set.
CREATE TABLE provenance (
  chunk_id       INTEGER PRIMARY KEY,
  origin_class   TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
  session_kind   TEXT NOT NULL CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent')),
  basis          TEXT NOT NULL CHECK (basis IN ('recorded', 'operator-file')),
  observed_at    INTEGER,          -- ms since the Unix epoch
  supersedes_key TEXT
);

-- Write-time recall metadata from annotation comments; NULL means neutral.
CREATE TABLE recall_meta (
  chunk_id     INTEGER PRIMARY KEY,
  importance   INTEGER CHECK (importance BETWEEN 1 AND 10),
  triggers     TEXT,               -- JSON array of phrases
  project_keys TEXT                -- JSON array of keys
);
