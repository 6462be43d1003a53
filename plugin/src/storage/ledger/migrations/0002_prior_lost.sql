-- Set when the file already held content the ledger could not vouch for
-- (after a loss) when it was first recorded.
ALTER TABLE files ADD COLUMN prior_lost INTEGER NOT NULL DEFAULT 0;
