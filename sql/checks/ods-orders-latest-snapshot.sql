-- check-clickhouse: orders in ODS (newest version of each, ods.order_v) per snapshot_date and
-- status. Orders whose newest version is the newest snapshot are that snapshot's whole content,
-- which the passport counts. Account: reader.
SELECT toString(snapshot_date) AS snapshot, toString(status) AS status, count() AS orders
FROM ods.order_v
GROUP BY snapshot, status
ORDER BY snapshot, status;
