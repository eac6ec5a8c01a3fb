-- orders_ingest, step 1: claim the order documents the loader has landed and no load has claimed
-- yet, under the run's load id. Account: etl.
--
-- The loader lands every message of topic orders in stg.orders_raw with _load_id = '' and its
-- partition and offset, and commits the offset only after that INSERT (tasks/orders.ts first waits
-- for the loader's group to have committed the end offsets read at the start of this task, which
-- orders.claim_bound names). A claim is a copy of those rows with _load_id set: each (partition,
-- offset) once, however often the loader landed it (at-least-once), and only if no load has
-- claimed it. So a retry of this step under the same run id adds only what its first try did not
-- copy, and a later run never claims the same message again. insert_distributed_sync=1 makes the
-- rows reach their shard before the parse step reads them.

INSERT INTO stg.orders_raw_dist (raw, kafka_topic, kafka_partition, kafka_offset, _load_id, _load_ts)
SELECT raw, kafka_topic, kafka_partition, kafka_offset, {{run.load_id}}, _load_ts
FROM stg.orders_raw_dist
WHERE _load_id = ''
    AND kafka_topic = {{orders.topic}}
    AND {{orders.claim_bound}}
    AND (kafka_partition, kafka_offset) GLOBAL NOT IN (
        SELECT kafka_partition, kafka_offset FROM stg.orders_raw_dist WHERE _load_id != '' AND kafka_topic = {{orders.topic}}
    )
ORDER BY kafka_partition, kafka_offset, _load_ts
LIMIT 1 BY kafka_partition, kafka_offset;
