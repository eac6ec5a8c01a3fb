-- check-clickhouse: the marts' event counts per day (funnel counts by type, traffic pageviews),
-- compared with the passport's valid hits by type. Account: reader.
SELECT
    toString(report_date) AS d,
    funnel_pageviews,
    funnel_cart_adds,
    funnel_purchases,
    traffic_pageviews
FROM
(
    SELECT report_date, pageviews AS funnel_pageviews, cart_adds AS funnel_cart_adds, purchases AS funnel_purchases
    FROM dm.daily_funnel_v
)
ANY LEFT JOIN
(
    SELECT report_date, pageviews AS traffic_pageviews FROM dm.daily_traffic_v
) USING report_date
ORDER BY d;
