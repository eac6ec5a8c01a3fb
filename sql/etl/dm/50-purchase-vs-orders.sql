-- dm.purchase_vs_orders for EVERY order id, then the commit row of every order day it has or had.
-- Scope: all days, every run. Account: etl.
--
-- An awaited order (purchase hits, no backend record yet) sits on its purchase day until the
-- snapshot carrying it is ingested, and a late order can arrive days after its purchase, so the
-- mart is rebuilt whole each run rather than for the run's days: a few thousand rows a month.
-- Purchase hits come from ODS (FINAL: a replayed day's hits collapse on WatchID), grouped by
-- purchaseID[1]; the backend side is dds.order_v (its newest committed snapshot of each order).
-- The FULL JOIN runs on the initiator (both sides are subqueries). Without join_use_nulls (18.16
-- has no Nullable join keys to speak of), a side that is missing reads as its defaults, so each
-- side carries a has_* flag and the missing side's columns are written as NULL explicitly.
-- Days committed earlier get a commit row too (count 0 when no row remains), so a row that moved
-- to another order day (an awaited order whose record arrived dated otherwise) leaves its old day.

INSERT INTO dm.purchase_vs_orders_dist
(
    order_day, order_id, purchase_day, purchase_hits, declared_revenue, declared_items_total,
    status, items_total, total, mismatch_class, _version, _load_id, _load_ts
)
SELECT
    if(has_order = 1, backend_order_date, hit_day) AS row_order_day,
    order_id,
    if(has_hits = 1, hit_day, NULL) AS row_purchase_day,
    hit_count AS row_purchase_hits,
    if(has_hits = 1, hit_revenue, NULL) AS row_declared_revenue,
    if(has_hits = 1, hit_items_total, NULL) AS row_declared_items_total,
    if(has_order = 1, backend_status, NULL) AS row_status,
    if(has_order = 1, backend_items_total, NULL) AS row_items_total,
    if(has_order = 1, backend_total, NULL) AS row_total,
    multiIf(
        has_order = 0, 'awaiting_order',
        backend_status = 'cancelled', 'cancelled',
        hit_count = 0, 'lost_event',
        hit_count > 1, 'duplicate_event',
        hit_revenue != backend_items_total, 'amount_delta',
        'match'
    ) AS row_mismatch_class,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT
        purchaseID[1] AS order_id,
        toUInt8(1) AS has_hits,
        min(EventDate) AS hit_day,
        toUInt32(count()) AS hit_count,
        any(purchaseRevenue[1]) AS hit_revenue,
        any(toDecimal64(arraySum(arrayMap((price, qty) -> price * toInt64(qty), productPrice, productQuantity)), 2)) AS hit_items_total
    FROM ods.event_dist FINAL
    WHERE EventType = 'purchase' AND notEmpty(purchaseID)
    GROUP BY order_id
)
ALL FULL OUTER JOIN
(
    SELECT
        order_id,
        toUInt8(1) AS has_order,
        order_date AS backend_order_date,
        status AS backend_status,
        items_total AS backend_items_total,
        total AS backend_total
    FROM dds.order_v
) USING order_id;

INSERT INTO dm.load_ledger_dist (target, data_date, row_count, _version, _load_id, _started_at, _load_ts)
SELECT 'purchase_vs_orders', data_date, row_count, {{run.version}}, {{run.load_id}}, {{run.started_at}}, {{platform.instant_now}}
FROM
(
    SELECT data_date
    FROM
    (
        SELECT order_day AS data_date FROM dm.purchase_vs_orders_dist WHERE _version = {{run.version}}
        UNION ALL
        SELECT data_date FROM dm.load_ledger_dist WHERE target = 'purchase_vs_orders'
    )
    GROUP BY data_date
)
ANY LEFT JOIN
(
    SELECT order_day AS data_date, count() AS row_count
    FROM dm.purchase_vs_orders_dist
    WHERE _version = {{run.version}}
    GROUP BY data_date
) USING data_date;
