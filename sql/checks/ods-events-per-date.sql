-- check-clickhouse: valid hits in ODS per counter day (distinct WatchID: exact before merges
-- collapse replays), next to the refused hits of the same day, so a shortfall can be told apart:
-- rows refused by the parser (errors above the passport) or rows never delivered. Account: reader.
SELECT
    d,
    sum(valid) AS valid,
    sum(refused) AS refused
FROM
(
    SELECT toString(EventDate) AS d, uniqExact(WatchID) AS valid, toUInt64(0) AS refused
    FROM ods.event_dist
    GROUP BY d
    UNION ALL
    SELECT EventDate AS d, toUInt64(0) AS valid,
        uniqExact(WatchID, VisitID, ClientID, EventDate, UTCEventTime, EventType, URL, Referer, IPAddress, ScreenWidth, ScreenHeight) AS refused
    FROM ods.event_errors_dist
    GROUP BY d
)
GROUP BY d
ORDER BY d;
