-- mart_daily_traffic: dm.daily_traffic_v against the same numbers recomputed from DDS another way
-- (visitors and known users counted over the day's session rows, the identity pairs joined per
-- cookie). Key: the day; it fails when a side lacks it or any measure differs.
SELECT
    report_date AS data_date,
    countIf(in_dds = 1) AS reference_rows,
    countIf(in_mart = 1) AS actual_rows,
    countIf(in_dds = 0 OR in_mart = 0 OR d_visitors != visitors OR d_sessions != sessions OR d_pageviews != pageviews OR d_known != known_users) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat(toString(report_date), ': DDS visitors/sessions/pageviews/known ',
               toString(d_visitors), '/', toString(d_sessions), '/', toString(d_pageviews), '/', toString(d_known),
               ', mart ', toString(visitors), '/', toString(sessions), '/', toString(pageviews), '/', toString(known_users)),
        in_dds = 0 OR in_mart = 0 OR d_visitors != visitors OR d_sessions != sessions OR d_pageviews != pageviews OR d_known != known_users)), 1, 20) AS offending_keys
FROM
(
    SELECT report_date, toUInt8(1) AS in_dds, d_visitors, d_sessions, d_pageviews, d_known
    FROM
    (
        SELECT session_date AS report_date, uniqExact(client_id) AS d_visitors, toUInt64(count()) AS d_sessions, toUInt64(sum(pageviews)) AS d_pageviews
        FROM dds.session_v
        GROUP BY report_date
    )
    ANY LEFT JOIN
    (
        SELECT session_date AS report_date, uniqExact(user_id) AS d_known
        FROM (SELECT DISTINCT session_date, client_id FROM dds.session_v)
        ALL INNER JOIN (SELECT client_id, user_id FROM dds.identity_v) USING client_id
        GROUP BY report_date
    ) USING report_date
)
ALL FULL OUTER JOIN
(
    SELECT report_date, toUInt8(1) AS in_mart, visitors, sessions, pageviews, known_users
    FROM dm.daily_traffic_v
) USING report_date
GROUP BY report_date
