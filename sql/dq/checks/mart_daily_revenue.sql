-- mart_daily_revenue: dm.daily_revenue_v against the revenue of paid orders recomputed from
-- dds.order_v, one row per order line (arrayJoin over the line indexes), category from
-- dic.products ('unknown' when the SKU is not in the catalog). Key: (day, category).
SELECT
    report_date AS data_date,
    countIf(in_dds = 1) AS reference_rows,
    countIf(in_mart = 1) AS actual_rows,
    countIf(in_dds = 0 OR in_mart = 0 OR d_orders != orders OR d_units != units OR d_revenue != revenue OR d_aov != aov) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat(toString(report_date), ' ', category, ': DDS orders/units/revenue/aov ',
               toString(d_orders), '/', toString(d_units), '/', toString(d_revenue), '/', toString(d_aov),
               ', mart ', toString(orders), '/', toString(units), '/', toString(revenue), '/', toString(aov)),
        in_dds = 0 OR in_mart = 0 OR d_orders != orders OR d_units != units OR d_revenue != revenue OR d_aov != aov)), 1, 20) AS offending_keys
FROM
(
    SELECT
        report_date,
        category,
        toUInt8(1) AS in_dds,
        toUInt64(uniqExact(order_id)) AS d_orders,
        toUInt64(sum(quantity)) AS d_units,
        sum(line_revenue) AS d_revenue,
        d_revenue / d_orders AS d_aov
    FROM
    (
        SELECT report_date, order_id, sku, quantity, line_revenue, if(catalog_category = '', 'unknown', catalog_category) AS category
        FROM
        (
            SELECT
                order_date AS report_date,
                order_id,
                item_sku[line] AS sku,
                item_quantity[line] AS quantity,
                item_price[line] * item_quantity[line] AS line_revenue
            FROM dds.order_v
            ARRAY JOIN arrayEnumerate(item_sku) AS line
            WHERE status = 'paid'
        )
        ANY LEFT JOIN (SELECT sku, toString(category) AS catalog_category FROM dic.products) USING sku
    )
    GROUP BY report_date, category
)
ALL FULL OUTER JOIN
(
    SELECT report_date, category, toUInt8(1) AS in_mart, orders, units, revenue, aov
    FROM dm.daily_revenue_v
) USING (report_date, category)
GROUP BY report_date
