-- classes_vs_inventory: on every closed order day (its last snapshot, day + window - 1, is in DDS)
-- within the passport's horizon, the orders per mismatch class in dm.purchase_vs_orders_v against
-- the classes the generator planted (data/world-inventory.json order_classes; awaiting_order is 0
-- on a closed day). Key: (day, class); reference_rows / actual_rows count orders.
SELECT
    order_day AS data_date,
    sum(planted) AS reference_rows,
    sum(in_mart) AS actual_rows,
    countIf(planted != in_mart) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat(toString(order_day), ' ', mismatch_class, ': ', toString(in_mart), ' in dm.purchase_vs_orders, ', toString(planted), ' planted'),
        planted != in_mart)), 1, 20) AS offending_keys
FROM
(
    SELECT order_day, mismatch_class, planted
    FROM {{dq.planted_classes}}
)
ALL FULL OUTER JOIN
(
    SELECT order_day, mismatch_class, toUInt64(count()) AS in_mart
    FROM dm.purchase_vs_orders_v
    GROUP BY order_day, mismatch_class
) USING (order_day, mismatch_class)
WHERE order_day <= {{dq.horizon_last_day}}
  AND order_day <= (SELECT if(count() = 0, toDate('1970-01-01'), max(snapshot_date) - {{dq.closing_lag_days}}) FROM dds.order_v)
GROUP BY order_day
