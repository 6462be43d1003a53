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
  session_id    TEXT
);
