-- Issue 22: a single version row that every change to stream_rules bumps, in the trigger
-- that notifies (0002). A replica in ReloadMode "poll" reads this one row every
-- ReloadInterval instead of holding a LISTEN connection: that works through pgbouncer in
-- transaction mode, where a session's LISTEN does not survive.
CREATE TABLE stream_rules_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
);
INSERT INTO stream_rules_version (id, version) VALUES (1, 0);

CREATE OR REPLACE FUNCTION stream_rules_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE stream_rules_version SET version = version + 1 WHERE id = 1;
    PERFORM pg_notify('stream_rules_changed', TG_OP);
    RETURN NULL;
END
$$;
