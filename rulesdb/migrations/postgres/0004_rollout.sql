-- Safe rollout (issue 11): shadow and early per rule, an outcome per firing, and per-rule
-- counters so the stats never count the raw rows.

-- Adding a column with a constant default rewrites no row (PostgreSQL 11+).
ALTER TABLE stream_rules ADD COLUMN shadow BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE stream_rules ADD COLUMN early  BOOLEAN NOT NULL DEFAULT FALSE;

-- '' for rows written before outcomes existed (and a discard whose move failed first).
ALTER TABLE stream_rule_stat ADD COLUMN outcome TEXT NOT NULL DEFAULT '';

-- One row per rule and outcome, kept up to date by SaveMove's single statement. No
-- foreign key, and retention never touches it: history outlives rules and raw rows.
CREATE TABLE stream_rule_counter (
    rule          TEXT        NOT NULL,
    outcome       TEXT        NOT NULL,
    fired         BIGINT      NOT NULL,
    last_fired_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (rule, outcome)
);

-- Backfill: the counters of an existing database start where its raw rows are.
INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at)
SELECT rule, outcome, COUNT(*), MAX(fired_at) FROM stream_rule_stat GROUP BY rule, outcome;

-- Counting by rule was the index's only use. Retention deletes by time instead; a BRIN
-- index over an append-mostly time column costs next to nothing per insert.
DROP INDEX stream_rule_stat_rule_idx;
CREATE INDEX stream_rule_stat_fired_at_idx ON stream_rule_stat USING brin (fired_at);
