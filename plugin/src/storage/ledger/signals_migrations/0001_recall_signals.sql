-- `.memory/recalls.sqlite`: how memory is used, recorded on the reply path.
-- Apart from the provenance ledger because it is written on every recall:
-- its journal is kept in memory and commits are not synced to disk, so a
-- crash may lose the last signals or damage this file, which is then set
-- aside and started anew. Provenance, sweeps and promotions stay in the
-- fully synced ledger.

-- Recall signals for dreaming: one row per entry of a daily or topic note
-- recalled in an interactive session, keyed by its file and text.
CREATE TABLE IF NOT EXISTS recall_entries (
  id                INTEGER PRIMARY KEY,
  path              TEXT NOT NULL,
  text_hash         TEXT NOT NULL,     -- sha-256 of the entry text as indexed
  text              TEXT NOT NULL,     -- the entry as last recalled (rehydration)
  heading           TEXT,
  start_line        INTEGER NOT NULL,
  end_line          INTEGER NOT NULL,
  recalls           INTEGER NOT NULL DEFAULT 0,
  relevance_sum     REAL NOT NULL DEFAULT 0,  -- over search hits only
  relevance_count   INTEGER NOT NULL DEFAULT 0,
  first_recalled_at INTEGER NOT NULL,
  last_recalled_at  INTEGER NOT NULL,
  UNIQUE (path, text_hash)
);
-- Normalised queries that recalled an entry.
CREATE TABLE IF NOT EXISTS recall_queries (
  entry_id  INTEGER NOT NULL,
  query_key TEXT NOT NULL,
  hits      INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (entry_id, query_key)
) WITHOUT ROWID;
-- Days (UTC, YYYY-MM-DD) an entry was recalled on.
CREATE TABLE IF NOT EXISTS recall_days (
  entry_id INTEGER NOT NULL,
  day      TEXT NOT NULL,
  PRIMARY KEY (entry_id, day)
) WITHOUT ROWID;
