-- Semantic intents: the trigger's vector and the embedder that made it.
ALTER TABLE intents ADD COLUMN trigger_model TEXT;
ALTER TABLE intents ADD COLUMN trigger_vector BLOB;
