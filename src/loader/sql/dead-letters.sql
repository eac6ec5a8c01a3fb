-- The loader's dead-letter table: one row per message that could not be a row of its table, either
-- undecodable (too_large, invalid_utf8, not_json, not_object: decided before any INSERT) or refused by
-- the server for its data (reason = the exception code's name, error_code = the code). raw holds the
-- message value as sent, cut to the loader's raw cap; raw_bytes is the value's full length.
-- ORDER BY the message's position, so "what happened at offset N" is one range read.
CREATE TABLE IF NOT EXISTS {{table}}
(
    dead_at DateTime('UTC'),
    topic String,
    partition UInt32,
    offset UInt64,
    key Nullable(String),
    raw String,
    raw_bytes UInt32,
    reason String,
    error_code Nullable(Int32),
    error_text String,
    target_table String
)
{{engine}}
