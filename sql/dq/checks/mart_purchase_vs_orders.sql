-- mart_purchase_vs_orders: dm.purchase_vs_orders_v against the reconciliation recomputed from DDS
-- another way: purchase hits (dds.event_v) and backend orders (dds.order_v) stacked with UNION ALL
-- and folded per order id, instead of the mart's join. Key: (order_day, order_id); compared: the
-- class, the purchase hit count, the declared revenue, the status and the backend items_total.
SELECT
    order_day AS data_date,
    countIf(in_dds = 1) AS reference_rows,
    countIf(in_mart = 1) AS actual_rows,
    countIf(in_dds = 0 OR in_mart = 0 OR d_class != mismatch_class OR d_hits != purchase_hits
            OR d_revenue != ifNull(toString(declared_revenue), '') OR d_status != ifNull(status, '') OR d_items_total != ifNull(toString(items_total), '')) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat('order ', order_id, ' on ', toString(order_day), ': DDS ', if(in_dds = 1, d_class, 'none'), ' (', toString(d_hits), ' hits), mart ',
               if(in_mart = 1, mismatch_class, 'none'), ' (', toString(purchase_hits), ' hits)'),
        in_dds = 0 OR in_mart = 0 OR d_class != mismatch_class OR d_hits != purchase_hits
            OR d_revenue != ifNull(toString(declared_revenue), '') OR d_status != ifNull(status, '') OR d_items_total != ifNull(toString(items_total), ''))), 1, 20) AS offending_keys
FROM
(
    SELECT
        order_id,
        if(has_order = 1, backend_day, hit_day) AS order_day,
        toUInt8(1) AS in_dds,
        toUInt32(hits) AS d_hits,
        if(hits > 0, toString(revenue), '') AS d_revenue,
        if(has_order = 1, backend_status, '') AS d_status,
        if(has_order = 1, toString(backend_items_total), '') AS d_items_total,
        multiIf(has_order = 0, 'awaiting_order', backend_status = 'cancelled', 'cancelled', hits = 0, 'lost_event', hits > 1, 'duplicate_event',
                revenue != backend_items_total, 'amount_delta', 'match') AS d_class
    FROM
    (
        SELECT
            order_id,
            max(is_order) AS has_order,
            sum(is_hit) AS hits,
            minIf(day, is_hit = 1) AS hit_day,
            maxIf(day, is_order = 1) AS backend_day,
            anyIf(amount, is_hit = 1) AS revenue,
            anyIf(amount, is_order = 1) AS backend_items_total,
            anyIf(order_status, is_order = 1) AS backend_status
        FROM
        (
            SELECT purchase_id[1] AS order_id, toUInt8(0) AS is_order, toUInt8(1) AS is_hit, event_date AS day,
                   purchase_revenue[1] AS amount, '' AS order_status
            FROM dds.event_v
            WHERE event_type = 'purchase' AND notEmpty(purchase_id)
            UNION ALL
            SELECT order_id, toUInt8(1) AS is_order, toUInt8(0) AS is_hit, order_date AS day, items_total AS amount, status AS order_status
            FROM dds.order_v
        )
        GROUP BY order_id
    )
)
ALL FULL OUTER JOIN
(
    SELECT order_id, order_day, toUInt8(1) AS in_mart, mismatch_class, purchase_hits, declared_revenue, status, items_total
    FROM dm.purchase_vs_orders_v
) USING (order_id, order_day)
GROUP BY order_day
