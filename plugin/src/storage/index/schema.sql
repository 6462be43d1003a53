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
  id              INTEGER PRIMARY KEY,  -- sequence << 12 | length in tokens
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

-- Full-text indexes, one per kind, so a search never filters matches by
-- kind. Contentless: the text lives once, in `chunks`, which also gives the
-- values FTS5's 'delete' command needs. No `%_docsize` table
-- (columnsize=0): a chunk's length in tokens is in the low bits of its id,
-- where `memory_bm25` reads it. The rowid is the chunk's id.
CREATE VIRTUAL TABLE entries_fts USING fts5(
  text, heading,
  content = '', columnsize = 0,
  tokenize = '{tokenizer}'
);
CREATE VIRTUAL TABLE windows_fts USING fts5(
  text,
  content = '', columnsize = 0,
  tokenize = '{tokenizer}'
);

-- Provenance of each entry: columns no text can set, projected from the
-- provenance ledger (or, for files the component never wrote, the operator).
CREATE TABLE provenance (
  chunk_id       INTEGER PRIMARY KEY,
  origin_class   TEXT NOT NULL CHECK (origin_class IN ('owner', 'agent', 'untrusted', 'system')),
  session_kind   TEXT NOT NULL CHECK (session_kind IN ('interactive', 'cron', 'heartbeat', 'subagent')),
  basis          TEXT NOT NULL CHECK (basis IN ('recorded', 'operator-file', 'lost', 'copied')),
  file_class     TEXT NOT NULL CHECK (file_class IN ('owner', 'agent', 'untrusted', 'system')),
  promotable     INTEGER NOT NULL CHECK (promotable IN (0, 1)),
  session_id     TEXT,
  observed_at    INTEGER,          -- ms since the Unix epoch
  supersedes_key TEXT,
  role           TEXT,             -- a transcript line's author role
  speaker        TEXT,             -- and the prefix it was written with
  order_key      INTEGER           -- ledger write order (provenance::order_of_sighting)
);

-- The entries below agent, whose text every search and read checks others
-- against (read after each write): found without reading every entry.
CREATE INDEX provenance_below_agent ON provenance (chunk_id)
  WHERE origin_class IN ('untrusted', 'system') OR file_class IN ('untrusted', 'system');

-- Entries by supersedes key (`KEY_INDEX` in mod.rs, which also adds it to
-- an index of this schema written before it).
CREATE INDEX IF NOT EXISTS provenance_by_key ON provenance (supersedes_key)
  WHERE supersedes_key IS NOT NULL;

-- Write-time recall metadata from annotation comments; NULL means neutral.
CREATE TABLE recall_meta (
  chunk_id     INTEGER PRIMARY KEY,
  importance   INTEGER CHECK (importance BETWEEN 1 AND 10),
  triggers     TEXT,               -- JSON array of phrases
  project_keys TEXT                -- JSON array of keys
);

-- The vector leg's compact codes (logic::vectors::codes): one per entry
-- whose vector is from the centre's embedder, taken about that centre. The
-- exact vectors stay in `chunks`; codes only pick which of them a search
-- reads. Without a centre row there are no codes (the first search makes
-- them).
CREATE TABLE code_centre (
  label   TEXT PRIMARY KEY,      -- provider/model
  vectors INTEGER NOT NULL,      -- how many vectors the mean was taken over
  mean    BLOB NOT NULL          -- little-endian f32
) WITHOUT ROWID;
CREATE TABLE entry_codes (
  id   INTEGER PRIMARY KEY,      -- the entry's chunk id
  code BLOB NOT NULL             -- little-endian u64 words of sign bits
);

-- The terms of the full-text indexes a search has needed (an FTS5 token,
-- as indexed): how many rows of its table hold it and its impacts
-- (logic::lexical::Impacts: the rows where it weighs most, and a bound for
-- the rest), so a search settles its best rows without scoring every
-- match. Built from FTS5 when a search first needs a term, then kept up to
-- date by every write.
CREATE TABLE lexicon (
  kind    TEXT NOT NULL CHECK (kind IN ('entry', 'window')),
  term    BLOB NOT NULL,
  rows    INTEGER NOT NULL,
  impacts BLOB NOT NULL,
  PRIMARY KEY (kind, term)
) WITHOUT ROWID;

-- The complete row list of each term in `lexicon`, in blocks of up to
-- 512 postings (logic::lexical::encode_block), keyed by their first row: a
-- search the impacts cannot settle merges these lists (MaxScore) instead of
-- asking FTS5.
CREATE TABLE postings (
  kind  TEXT NOT NULL CHECK (kind IN ('entry', 'window')),
  term  BLOB NOT NULL,
  first INTEGER NOT NULL,
  block BLOB NOT NULL,
  PRIMARY KEY (kind, term, first)
) WITHOUT ROWID;
