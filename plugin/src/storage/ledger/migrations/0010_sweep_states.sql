-- How far a sweep got: `pending` (recorded before the rename that commits
-- MEMORY.md, which may not have happened), `committed` (MEMORY.md is the
-- sweep's; its DREAMS.md summary may not be written yet), `done`. An
-- interrupted sweep is completed or abandoned at the next open. Sweeps
-- recorded before this step were whole: `done`.
ALTER TABLE dream_sweeps ADD COLUMN state TEXT NOT NULL DEFAULT 'done';
-- The DREAMS.md summary, rendered before the rename so it survives a kill.
ALTER TABLE dream_sweeps ADD COLUMN summary TEXT;
