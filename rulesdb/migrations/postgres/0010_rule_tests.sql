-- Issue 37: a rule's tests, the examples that must fire it and must not (Rule.Tests), as
-- JSON: {"fires": […], "passes": […]}; '' when the rule has none. Moves never read them.
ALTER TABLE stream_rules ADD COLUMN tests TEXT NOT NULL DEFAULT '';
