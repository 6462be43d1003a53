-- How often an entry was recalled on a day; days recorded before count once.
ALTER TABLE recall_days ADD COLUMN hits INTEGER NOT NULL DEFAULT 1;
