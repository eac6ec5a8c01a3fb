-- mart_daily_funnel: dm.daily_funnel_v against the funnel recomputed from DDS's hits (dds.event_v,
-- in the counter's time zone) per cookie and day. Key: the day.
SELECT
    report_date AS data_date,
    countIf(in_dds = 1) AS reference_rows,
    countIf(in_mart = 1) AS actual_rows,
    countIf(in_dds = 0 OR in_mart = 0 OR d_visitors != visitors OR d_viewed != viewed OR d_carted != carted OR d_purchased != purchased
            OR d_pageviews != pageviews OR d_cart_adds != cart_adds OR d_purchases != purchases) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat(toString(report_date), ': DDS visitors/viewed/carted/purchased ',
               toString(d_visitors), '/', toString(d_viewed), '/', toString(d_carted), '/', toString(d_purchased),
               ' events ', toString(d_pageviews), '/', toString(d_cart_adds), '/', toString(d_purchases),
               ', mart ', toString(visitors), '/', toString(viewed), '/', toString(carted), '/', toString(purchased),
               ' events ', toString(pageviews), '/', toString(cart_adds), '/', toString(purchases)),
        in_dds = 0 OR in_mart = 0 OR d_visitors != visitors OR d_viewed != viewed OR d_carted != carted OR d_purchased != purchased
            OR d_pageviews != pageviews OR d_cart_adds != cart_adds OR d_purchases != purchases)), 1, 20) AS offending_keys
FROM
(
    SELECT
        event_date AS report_date,
        toUInt8(1) AS in_dds,
        toUInt64(count()) AS d_visitors,
        toUInt64(countIf(level >= 1)) AS d_viewed,
        toUInt64(countIf(level >= 2)) AS d_carted,
        toUInt64(countIf(level >= 3)) AS d_purchased,
        toUInt64(sum(client_pageviews)) AS d_pageviews,
        toUInt64(sum(client_cart_adds)) AS d_cart_adds,
        toUInt64(sum(client_purchases)) AS d_purchases
    FROM
    (
        SELECT
            event_date,
            client_id,
            windowFunnel(86400)(event_time, event_type = 'pageview', event_type = 'add_to_cart', event_type = 'purchase') AS level,
            countIf(event_type = 'pageview') AS client_pageviews,
            countIf(event_type = 'add_to_cart') AS client_cart_adds,
            countIf(event_type = 'purchase') AS client_purchases
        FROM dds.event_v
        GROUP BY event_date, client_id
    )
    GROUP BY report_date
)
ALL FULL OUTER JOIN
(
    SELECT report_date, toUInt8(1) AS in_mart, visitors, viewed, carted, purchased, pageviews, cart_adds, purchases
    FROM dm.daily_funnel_v
) USING report_date
GROUP BY report_date
