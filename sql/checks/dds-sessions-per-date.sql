-- check-clickhouse: every valid hit belongs to exactly one session, so the sessions of a day hold
-- as many hits as ODS has valid hits for it. Account: reader.
SELECT toString(session_date) AS d, count() AS sessions, sum(events_total) AS hits
FROM dds.session_v
GROUP BY d
ORDER BY d;
