-- Wave 2, issue 13: predicate trees, field paths, fixes and rule metadata.
-- The trees and the fix are JSON in TEXT columns, written and read by rulesdb exactly as
-- the rule's JSON spells them ('' when the rule has none), the same in both dialects.
ALTER TABLE stream_rules ADD COLUMN predicate    TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN applies_when TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN field        TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN fix          TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN severity     TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN explanation  TEXT NOT NULL DEFAULT '';

-- What a fix changed in the answer, as a JSON list of line changes; '' for other firings.
ALTER TABLE stream_rule_stat ADD COLUMN diff TEXT NOT NULL DEFAULT '';
