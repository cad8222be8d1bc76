-- The reminder budget: a rule may be always inline (delivery 'full', '' otherwise) and say
-- what its manifest block quotes (hint, '' for the first sentence of its text).
ALTER TABLE stream_rules ADD COLUMN delivery TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_rules ADD COLUMN hint     TEXT NOT NULL DEFAULT '';

-- How a firing's text reached the model: 'full', 'manifest', or '' (a would-fire, a fix,
-- a row written before deliveries existed); and whether a manifest delivery was read with
-- stream_rule_read later in its move.
ALTER TABLE stream_rule_stat ADD COLUMN delivery      TEXT    NOT NULL DEFAULT '';
ALTER TABLE stream_rule_stat ADD COLUMN manifest_read BOOLEAN NOT NULL DEFAULT FALSE;

-- One row per rule and delivery, kept up to date by SaveMove's transaction, as
-- stream_rule_counter is per outcome. Deliveries start at this migration.
CREATE TABLE stream_rule_delivery_counter (
    rule          TEXT    NOT NULL,
    delivery      TEXT    NOT NULL,
    fired         INTEGER NOT NULL,
    manifest_read INTEGER NOT NULL,
    PRIMARY KEY (rule, delivery)
);
