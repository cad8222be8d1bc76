-- Idempotent move records (issue 8): see the PostgreSQL migration of the same number.
CREATE TABLE stream_chat_writer (
    chat_id    TEXT      NOT NULL,
    writer     TEXT      NOT NULL,
    seq        INTEGER   NOT NULL,
    updated_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')),
    PRIMARY KEY (chat_id, writer)
);
CREATE INDEX stream_chat_writer_writer_idx ON stream_chat_writer (writer);
