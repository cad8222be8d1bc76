-- A hand edit that leaves updated_at alone still counts as an edit: updated_at moves,
-- so a calibration wave will not overwrite it. (SQLite has no NOTIFY: other processes
-- see changes on the store's periodic reload.)
CREATE TRIGGER stream_rules_touch
    AFTER UPDATE ON stream_rules
    FOR EACH ROW WHEN NEW.updated_at IS OLD.updated_at
BEGIN
    UPDATE stream_rules
       SET updated_at = strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')
     WHERE id = NEW.id;
END;
