-- Issue 14: a firing of an early interrupt says so, and how many bytes of the answer had
-- been generated when the provider was stopped.
ALTER TABLE stream_rule_stat ADD COLUMN early BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE stream_rule_stat ADD COLUMN cut_at_bytes BIGINT NOT NULL DEFAULT 0;
