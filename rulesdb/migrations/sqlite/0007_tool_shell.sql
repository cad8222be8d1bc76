-- Placeholder: the migration of this number belongs to another branch (the tool's shell
-- field). Versions must be contiguous, so this branch holds the number with a no-op; on
-- merge, take the other branch's file.
SELECT 1;
