-- Every change to stream_rules, by this library or by hand in psql, notifies the
-- listeners of every replica.
CREATE FUNCTION stream_rules_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('stream_rules_changed', TG_OP);
    RETURN NULL;
END
$$;

CREATE TRIGGER stream_rules_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON stream_rules
    FOR EACH STATEMENT EXECUTE FUNCTION stream_rules_notify();

-- A hand edit that leaves updated_at alone still counts as an edit: updated_at grows,
-- so a calibration wave will not overwrite it.
CREATE FUNCTION stream_rules_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
        NEW.updated_at := GREATEST(now(), OLD.updated_at + interval '1 microsecond');
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER stream_rules_touch
    BEFORE UPDATE ON stream_rules
    FOR EACH ROW EXECUTE FUNCTION stream_rules_touch();
