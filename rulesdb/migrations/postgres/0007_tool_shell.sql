-- A tool rule may read its values as shell commands (Rule.Shell). Tool rules in mode
-- interrupt need no column: mode is already stored per rule.
ALTER TABLE stream_rules ADD COLUMN shell BOOLEAN NOT NULL DEFAULT FALSE;
