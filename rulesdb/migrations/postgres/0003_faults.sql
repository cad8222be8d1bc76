-- Idempotent move records (issue 8). A Store numbers the moves it writes (seq, growing,
-- one writer id per Store, random at Open) and writes each chat's moves in order. SaveMove
-- applies a record only if its seq is above the last one applied for (chat, writer), in
-- the same statement: a retry after an unknown outcome (a timeout after the COMMIT, a
-- connection cut before the answer) never counts a move or a firing twice.
-- A Store deletes its own rows when it closes; rows of a process that crashed are dead
-- weight (one per chat it wrote) and may be deleted by updated_at.
CREATE TABLE stream_chat_writer (
    chat_id    TEXT        NOT NULL,
    writer     TEXT        NOT NULL,
    seq        BIGINT      NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chat_id, writer)
);
CREATE INDEX stream_chat_writer_writer_idx ON stream_chat_writer (writer);
