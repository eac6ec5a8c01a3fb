-- dm.daily_dq_errors for every day present in ods.event_errors, then the commit row of each day.
-- Scope: all days, every run (the error table is small and is not versioned). Account: etl.
--
-- The day is the hit's EventDate when it is a real date written YYYY-MM-DD (the round trip
-- refuses what 18.16's lenient parser would wrap around), else the day it was loaded.
-- A replayed day lands its errors again with a new _load_ts and Kafka position; ods.event_errors
-- collapses such copies on its sorting key (the hit's own fields), and FINAL reads it as if merged,
-- so error_rows counts each refused hit once too. distinct_errors, the fingerprint count, is kept
-- as the check that says so (it equals error_rows).

INSERT INTO dm.daily_dq_errors_dist (report_date, error_class, error_rows, distinct_errors, _version, _load_id, _load_ts)
SELECT
    if(toString(toDateOrZero(EventDate)) = EventDate, toDateOrZero(EventDate), toDate(_load_ts)) AS report_date,
    toString(error_class) AS error_class_name,
    count() AS error_rows,
    uniqExact(WatchID, VisitID, ClientID, EventDate, UTCEventTime, EventType, URL, Referer, IPAddress, ScreenWidth, ScreenHeight) AS distinct_errors,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM ods.event_errors_dist FINAL
GROUP BY report_date, error_class_name;

INSERT INTO dm.load_ledger_dist (target, data_date, row_count, _version, _load_id, _started_at, _load_ts)
SELECT 'daily_dq_errors', report_date, count(), {{run.version}}, {{run.load_id}}, {{run.started_at}}, {{platform.instant_now}}
FROM dm.daily_dq_errors_dist
WHERE _version = {{run.version}}
GROUP BY report_date;
