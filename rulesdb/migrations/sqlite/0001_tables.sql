-- Rules, firings, chat state and seeding state. Times are UTC text
-- ("2006-01-02 15:04:05.999999+00:00"), which the driver reads back as time.Time.

CREATE TABLE stream_rules (
    id                INTEGER   PRIMARY KEY AUTOINCREMENT,
    name              TEXT      NOT NULL UNIQUE,
    scope             TEXT      NOT NULL,
    condition         TEXT      NOT NULL DEFAULT '',
    negate            BOOLEAN   NOT NULL DEFAULT FALSE,
    "when"            TEXT      NOT NULL DEFAULT '',   -- environment names, comma-separated
    text              TEXT      NOT NULL,
    mode              TEXT      NOT NULL DEFAULT '',   -- empty: derived from scope
    repeat            TEXT      NOT NULL DEFAULT '',
    enabled           BOOLEAN   NOT NULL DEFAULT TRUE,
    created_at        TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')),
    updated_at        TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')),
    seeded            BOOLEAN   NOT NULL DEFAULT FALSE,
    seed_version      INTEGER,
    seeded_updated_at TIMESTAMP
);

-- One row per firing. No foreign key: rows outlive their rule.
CREATE TABLE stream_rule_stat (
    id       INTEGER   PRIMARY KEY AUTOINCREMENT,
    rule     TEXT      NOT NULL,
    chat_id  TEXT      NOT NULL,
    move     INTEGER   NOT NULL,
    mode     TEXT      NOT NULL,
    retry    BOOLEAN   NOT NULL DEFAULT FALSE,
    tool     TEXT      NOT NULL DEFAULT '',
    fired_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);
CREATE INDEX stream_rule_stat_rule_idx ON stream_rule_stat (rule);
CREATE INDEX stream_rule_stat_chat_idx ON stream_rule_stat (chat_id, move);

CREATE TABLE stream_chat (
    chat_id    TEXT      PRIMARY KEY,
    moves      INTEGER   NOT NULL DEFAULT 0,
    updated_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);

CREATE TABLE stream_chat_rule (
    chat_id         TEXT    NOT NULL,
    rule            TEXT    NOT NULL,
    last_fired_move INTEGER NOT NULL,
    PRIMARY KEY (chat_id, rule)
);

-- Every rule name ever seeded: a seeded rule the master deleted is not brought back.
CREATE TABLE stream_rule_seed (
    name          TEXT      PRIMARY KEY,
    first_version INTEGER   NOT NULL,
    seeded_at     TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);

CREATE TABLE stream_seed_state (
    id         INTEGER   PRIMARY KEY CHECK (id = 1),
    version    INTEGER   NOT NULL,
    applied_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);
