-- dm.daily_revenue for the run's days, then the commit row of each day (also of a day that has
-- no paid order any more: its old rows must disappear from the view).
-- Scope: the run's days (order days). Account: etl.
--
-- Paid orders from dds.order_v, one row per order line (ARRAY JOIN of the item arrays), category
-- from dic.products, which every node holds whole (one replication path for all nodes), so the
-- lookup is local wherever the query runs. The JOIN runs on the initiator (both sides are
-- subqueries). Money stays Decimal: price × qty summed per day and category; aov is truncated to
-- kopecks by the Decimal division.

INSERT INTO dm.daily_revenue_dist (report_date, category, orders, units, revenue, aov, _version, _load_id, _load_ts)
SELECT
    report_date,
    if(category = '', 'unknown', category) AS category_name,
    uniqExact(order_id) AS orders,
    sum(quantity) AS units,
    sum(line_revenue) AS revenue,
    revenue / orders AS aov,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT order_date AS report_date, order_id, sku, quantity, price * quantity AS line_revenue
    FROM dds.order_v
    ARRAY JOIN item_sku AS sku, item_quantity AS quantity, item_price AS price
    WHERE status = 'paid' AND order_date IN {{run.date_set}}
)
ANY LEFT JOIN
(
    SELECT sku, toString(category) AS category FROM dic.products
) USING sku
GROUP BY report_date, category_name;

{{ledger.commit(daily_revenue, report_date)}};
