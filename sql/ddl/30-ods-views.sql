-- Current state of the deduplicated ODS tables, merged at read time (FINAL works through
-- Distributed on 18.16 too: each shard merges its own rows, and a key lives on one shard).

CREATE VIEW IF NOT EXISTS ods.event_v ON CLUSTER {{cluster}} AS
SELECT * FROM ods.event_dist FINAL;

CREATE VIEW IF NOT EXISTS ods.order_v ON CLUSTER {{cluster}} AS
SELECT * FROM ods.order_dist FINAL;

CREATE VIEW IF NOT EXISTS ods.event_errors_v ON CLUSTER {{cluster}} AS
SELECT * FROM ods.event_errors_dist FINAL;
