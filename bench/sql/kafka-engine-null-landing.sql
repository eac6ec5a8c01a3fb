-- The Kafka-engine baseline of the loader throughput bench (bench/loader-bench.ts): the reader
-- <db>.hits_raw_kafka (kafka-engine-reader.sql) and one view that lands what it reads in
-- the landing it is given, the bench copy of the world's Null landing stg.hits_in, with the loader's own columns
-- filled as far as a reader can (18.16 has no raw message and no Kafka virtual columns). So both
-- paths pay the same landing and nothing after it.

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.hits_kafka_mv ON CLUSTER {{cluster}}
TO {{landing}}
AS SELECT
    *,
    '' AS _raw,
    {{hits_topic}} AS kafka_topic,
    toUInt32(0) AS kafka_partition,
    toUInt64(0) AS kafka_offset
FROM {{db}}.hits_raw_kafka;
