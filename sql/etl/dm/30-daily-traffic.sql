-- dm.daily_traffic for EVERY day in dds.session_v, then the commit row of each day written.
-- Scope: all days, every run. Account: etl.
--
-- known_users of a past day grows whenever a later purchase ties one of that day's cookies to a
-- person, so the mart is rebuilt whole each run instead of only for the run's days: one GROUP BY
-- over the sessions (a few thousand rows a day), cheap next to the cost of missing a change.
-- Sessions are first summed per (day, cookie), then each cookie's user ids are attached as one
-- array (a cookie with two persons must not count its sessions twice).

INSERT INTO dm.daily_traffic_dist (report_date, visitors, sessions, pageviews, known_users, _version, _load_id, _load_ts)
SELECT
    report_date,
    count() AS visitors,
    sum(client_sessions) AS sessions,
    sum(client_pageviews) AS pageviews,
    uniqExactArray(user_ids) AS known_users,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT session_date AS report_date, client_id, count() AS client_sessions, sum(pageviews) AS client_pageviews
    FROM dds.session_v
    GROUP BY report_date, client_id
)
ANY LEFT JOIN
(
    SELECT client_id, groupUniqArray(user_id) AS user_ids
    FROM dds.identity_v
    GROUP BY client_id
) USING client_id
GROUP BY report_date;

INSERT INTO dm.load_ledger_dist (target, data_date, row_count, _version, _load_id, _started_at, _load_ts)
SELECT 'daily_traffic', report_date, count(), {{run.version}}, {{run.load_id}}, {{run.started_at}}, {{platform.instant_now}}
FROM dm.daily_traffic_dist
WHERE _version = {{run.version}}
GROUP BY report_date;
