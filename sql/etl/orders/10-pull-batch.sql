-- orders_ingest, step 1: one batch from the orders reader into the landing table, tagged with the
-- run's load id. Account: etl. Node: the first node, the only one that has stg.orders_raw_kafka.
--
-- A direct SELECT from a Kafka table reads what the group has not committed, up to one block,
-- and commits what it read (18.16 always; modern servers need kafka_commit_on_select on the table
-- and stream_like_engine_allow_direct_select on the query, which tasks/orders.ts sends from the
-- platform layer). So this statement is the only place a message is taken: if the INSERT failed
-- after the read, that batch would be lost to the reader (the snapshot can be re-sent; each one is
-- a pure function of its day). insert_distributed_sync=1 makes the rows reach their shard before
-- the parse step reads them. One message per row; raw is the document as sent.

INSERT INTO stg.orders_raw_dist (raw, kafka_topic, kafka_partition, kafka_offset, _load_id, _load_ts)
SELECT
    raw,
    {{orders.topic}},
    {{platform.kafka_partition}},
    {{platform.kafka_offset}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM stg.orders_raw_kafka
WHERE notEmpty(raw);
