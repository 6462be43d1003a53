-- Where a promotion came from as the sweep saw it; promotions made before
-- these columns existed have them NULL.
ALTER TABLE promotions ADD COLUMN citation TEXT;      -- path#Lx-Ly of the source entry
ALTER TABLE promotions ADD COLUMN source_class TEXT;  -- the source's class (lower of entry and file)
ALTER TABLE promotions ADD COLUMN session_kind TEXT;
ALTER TABLE promotions ADD COLUMN fact TEXT;          -- the fact as promoted, one line

-- Every sweep that ran (dry runs excepted), whatever it did: the phases, the
-- outcome, and why a model rewrite was refused. `dream_sweep` is its row in
-- dream_sweeps when it promoted or merged anything.
CREATE TABLE IF NOT EXISTS sweep_log (
  id             INTEGER PRIMARY KEY,
  at             INTEGER NOT NULL,
  phases         TEXT NOT NULL,   -- comma-separated: light,rem,deep
  staged         INTEGER NOT NULL,
  themes         INTEGER NOT NULL,
  candidates     INTEGER NOT NULL,
  added          INTEGER NOT NULL,
  merged         INTEGER NOT NULL,
  superseded     INTEGER NOT NULL,
  rewritten      INTEGER NOT NULL,
  consolidation  TEXT NOT NULL,
  refusal_kind   TEXT,
  refusal_reason TEXT,
  memory_changed INTEGER NOT NULL,
  dreams_changed INTEGER NOT NULL,
  dream_sweep    INTEGER
);
