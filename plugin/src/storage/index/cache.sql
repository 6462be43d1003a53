-- Embeddings by content, kept across index rebuilds: recomputing them is the
-- expensive part of indexing.
CREATE TABLE IF NOT EXISTS embedding_cache (
  provider TEXT NOT NULL,
  model    TEXT NOT NULL,
  hash     TEXT NOT NULL,
  dims     INTEGER NOT NULL,
  vector   BLOB NOT NULL,
  PRIMARY KEY (provider, model, hash)
) WITHOUT ROWID;
