-- check-clickhouse: refused hits per counter day and error_class, each distinct hit once (a
-- replayed day lands its errors again; the fingerprint is the hit's own fields, as in
-- dm.daily_dq_errors). Account: reader.
SELECT
    EventDate AS d,
    toString(error_class) AS error_class,
    uniqExact(WatchID, VisitID, ClientID, EventDate, UTCEventTime, EventType, URL, Referer, IPAddress, ScreenWidth, ScreenHeight) AS refused
FROM ods.event_errors_dist
GROUP BY d, error_class
ORDER BY d, error_class;
