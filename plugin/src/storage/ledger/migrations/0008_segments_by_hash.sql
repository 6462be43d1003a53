-- Provenance follows content: a line is looked up by its text wherever it is.
CREATE INDEX IF NOT EXISTS segments_by_hash ON segments (text_hash);
