-- Issue 22: a single version row that every change to stream_rules bumps. A store in
-- ReloadMode "poll" reads this one row every ReloadInterval and reloads only when it
-- moved, instead of reloading every rule on the backstop.
CREATE TABLE stream_rules_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO stream_rules_version (id, version) VALUES (1, 0);

CREATE TRIGGER stream_rules_version_insert AFTER INSERT ON stream_rules
BEGIN
    UPDATE stream_rules_version SET version = version + 1 WHERE id = 1;
END;
CREATE TRIGGER stream_rules_version_update AFTER UPDATE ON stream_rules
BEGIN
    UPDATE stream_rules_version SET version = version + 1 WHERE id = 1;
END;
CREATE TRIGGER stream_rules_version_delete AFTER DELETE ON stream_rules
BEGIN
    UPDATE stream_rules_version SET version = version + 1 WHERE id = 1;
END;
