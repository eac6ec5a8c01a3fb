-- dds.order for the run's days: every order of those Samara order days as the newest ODS snapshot
-- shows it (ods.order_v reads with FINAL; the version there is snapshot_date), times in Samara,
-- items split into sku / quantity / price arrays. Then the commit row of each day.
-- Scope: the run's days (order days). Account: etl (INSERT … SELECT only).
--
-- items is the raw JSON array the ingest checked (sql/etl/orders/order-verdict.fragment.sql):
-- objects {"sku":…, "qty":…, "price":"…"}. 18.16 has no JSONExtract, so each object is cut out
-- with extractAll and read with visitParamExtract* (which modern servers still have); a price that
-- is not a money string becomes 0 rather than throwing (the check already refused such orders).

INSERT INTO dds.order_dist
(
    order_id, user_id, status, order_date, created_at, updated_at,
    items_total, discount, delivery, total, item_sku, item_quantity, item_price, snapshot_date,
    _version, _load_id, _load_ts
)
SELECT
    order_id,
    user_id,
    toString(status) AS status,
    toDate(toTimeZone(created_at, 'Europe/Samara')) AS order_date,
    toDateTime(toTimeZone(created_at, 'Europe/Samara'), 'Europe/Samara') AS created_at_local,
    toDateTime(toTimeZone(updated_at, 'Europe/Samara'), 'Europe/Samara') AS updated_at_local,
    items_total,
    discount,
    delivery,
    total,
    arrayMap(o -> visitParamExtractString(o, 'sku'), item_objects) AS item_sku,
    arrayMap(o -> toUInt32(visitParamExtractUInt(o, 'qty')), item_objects) AS item_quantity,
    arrayMap(o -> toDecimal64(if(match(visitParamExtractString(o, 'price'), '^[0-9]{1,16}[.][0-9]{2}$'), visitParamExtractString(o, 'price'), '0'), 2), item_objects) AS item_price,
    snapshot_date,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT *, extractAll(items, '\\{[^{}]*\\}') AS item_objects
    FROM ods.order_v
    WHERE toDate(toTimeZone(created_at, 'Europe/Samara')) IN {{run.date_set}}
);

{{ledger.commit(order, order_date)}};
