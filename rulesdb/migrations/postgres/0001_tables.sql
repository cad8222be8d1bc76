-- Rules, firings, chat state and seeding state.

CREATE TABLE stream_rules (
    id                BIGSERIAL   PRIMARY KEY,
    name              TEXT        NOT NULL,
    scope             TEXT        NOT NULL,
    condition         TEXT        NOT NULL DEFAULT '',
    negate            BOOLEAN     NOT NULL DEFAULT FALSE,
    "when"            TEXT        NOT NULL DEFAULT '',   -- environment names, comma-separated
    text              TEXT        NOT NULL,
    mode              TEXT        NOT NULL DEFAULT '',   -- empty: derived from scope
    repeat            TEXT        NOT NULL DEFAULT '',
    enabled           BOOLEAN     NOT NULL DEFAULT TRUE,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    seeded            BOOLEAN     NOT NULL DEFAULT FALSE, -- inserted by a seed set
    seed_version      INTEGER,                            -- the seed version that last wrote it
    seeded_updated_at TIMESTAMPTZ,                        -- updated_at as the seed wrote it
    CONSTRAINT stream_rules_name_key UNIQUE (name)
);

-- One row per firing. No foreign key: rows outlive their rule.
CREATE TABLE stream_rule_stat (
    id       BIGSERIAL   PRIMARY KEY,
    rule     TEXT        NOT NULL,
    chat_id  TEXT        NOT NULL,
    move     BIGINT      NOT NULL,
    mode     TEXT        NOT NULL,
    retry    BOOLEAN     NOT NULL DEFAULT FALSE,
    tool     TEXT        NOT NULL DEFAULT '',
    fired_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX stream_rule_stat_rule_idx ON stream_rule_stat (rule);
CREATE INDEX stream_rule_stat_chat_idx ON stream_rule_stat (chat_id, move);

CREATE TABLE stream_chat (
    chat_id    TEXT        PRIMARY KEY,
    moves      BIGINT      NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE stream_chat_rule (
    chat_id         TEXT   NOT NULL,
    rule            TEXT   NOT NULL,
    last_fired_move BIGINT NOT NULL,
    PRIMARY KEY (chat_id, rule)
);

-- Every rule name ever seeded: a seeded rule the master deleted is not brought back.
CREATE TABLE stream_rule_seed (
    name          TEXT        PRIMARY KEY,
    first_version INTEGER     NOT NULL,
    seeded_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE stream_seed_state (
    id         INTEGER     PRIMARY KEY CHECK (id = 1),
    version    INTEGER     NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
