-- orders_ingest, step 2: the landed batch (the run's load id) parsed into ods.order (valid documents)
-- and ods.order_errors (the rest, with the reason). Account: etl.
--
-- Both statements compute the same verdict (orders.verdict, sql/etl/orders/order-verdict.fragment.sql)
-- on the same slice of stg.orders_raw_dist, and take exactly the complementary rows.
-- ods.order is versioned by snapshot_date (the later snapshot of an order wins); an
-- (order_id, snapshot_date) already in ODS is never inserted again, and _load_ts is the landing
-- time of the batch, not now(): so rerunning this step, for the same load id or after a
-- redelivered snapshot, leaves ods.order_v exactly as it was (FINAL on equal versions would keep
-- an arbitrary one of two different rows). The error route skips documents already recorded
-- by any load, so neither a rerun nor a redelivered snapshot doubles them. The slice is read on the initiator and each
-- row is routed by the target's key (order_id, as every version of an order must share a shard
-- for the ReplacingMergeTree to collapse them). GLOBAL: the sets are built once on the initiator
-- and shipped, since both sides are Distributed. Money is parsed only when it is a money string
-- (toDecimal64 throws on too many digits, and a throw would fail the whole batch): the verdict
-- already guarantees it for the rows kept, but the server may compute columns before the filter.

INSERT INTO ods.order_dist
(
    order_id, user_id, status, created_at, updated_at, items_total, discount, delivery, total, items,
    snapshot_date, _load_id, _load_ts
)
SELECT
    visitParamExtractString(raw, 'order_id') AS order_id,
    toUInt64OrZero(visitParamExtractRaw(raw, 'user_id')) AS user_id,
    visitParamExtractString(raw, 'status') AS status,
    {{orders.created_at}} AS created_at,
    {{orders.updated_at}} AS updated_at,
    toDecimal64(if(match(visitParamExtractString(raw, 'items_total'), '^[0-9]{1,16}[.][0-9]{2}$'), visitParamExtractString(raw, 'items_total'), '0'), 2) AS items_total,
    toDecimal64(if(match(visitParamExtractString(raw, 'discount'), '^[0-9]{1,16}[.][0-9]{2}$'), visitParamExtractString(raw, 'discount'), '0'), 2) AS discount,
    toDecimal64(if(match(visitParamExtractString(raw, 'delivery'), '^[0-9]{1,16}[.][0-9]{2}$'), visitParamExtractString(raw, 'delivery'), '0'), 2) AS delivery,
    toDecimal64(if(match(visitParamExtractString(raw, 'total'), '^[0-9]{1,16}[.][0-9]{2}$'), visitParamExtractString(raw, 'total'), '0'), 2) AS total,
    visitParamExtractRaw(raw, 'items') AS items,
    toDateOrZero(visitParamExtractString(raw, 'snapshot_date')) AS snapshot_date,
    _load_id,
    landed_at
FROM
(
    SELECT raw, _load_id, _load_ts AS landed_at, {{orders.verdict}} AS error_class
    FROM stg.orders_raw_dist
    WHERE _load_id = {{run.load_id}}
)
WHERE error_class = ''
    AND (order_id, snapshot_date) GLOBAL NOT IN (SELECT order_id, snapshot_date FROM ods.order_dist)
ORDER BY order_id, snapshot_date, landed_at
LIMIT 1 BY order_id, snapshot_date;

INSERT INTO ods.order_errors_dist (raw, error_class, _load_id, _load_ts)
SELECT raw, error_class, _load_id, landed_at
FROM
(
    SELECT raw, _load_id, _load_ts AS landed_at, {{orders.verdict}} AS error_class
    FROM stg.orders_raw_dist
    WHERE _load_id = {{run.load_id}}
)
WHERE NOT (error_class = '')
    AND raw GLOBAL NOT IN (SELECT raw FROM ods.order_errors_dist)
ORDER BY raw
LIMIT 1 BY raw;
