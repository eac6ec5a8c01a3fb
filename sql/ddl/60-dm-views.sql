-- dm read views: the marts as the newest committed build shows them (the filter is explained in
-- 50-dds-views.sql: newest row per grain key, unless older than its day's newest commit).

CREATE VIEW IF NOT EXISTS dm.load_ledger_v ON CLUSTER {{cluster}} AS
SELECT
    target,
    data_date,
    max(_version) AS committed_version,
    argMax(row_count, _version) AS row_count,
    argMax(_load_id, _version) AS load_id,
    argMax(_started_at, _version) AS started_at,
    argMax(_load_ts, _version) AS committed_at
FROM dm.load_ledger_dist
GROUP BY target, data_date;

CREATE VIEW IF NOT EXISTS dm.daily_traffic_v ON CLUSTER {{cluster}} AS
SELECT report_date, visitors, sessions, pageviews, known_users, _version, _load_id, _load_ts
FROM (SELECT * FROM dm.daily_traffic_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS report_date, max(_version) AS committed_version
    FROM dm.load_ledger_dist
    WHERE target = 'daily_traffic'
    GROUP BY report_date
) USING report_date
WHERE _version >= committed_version;

CREATE VIEW IF NOT EXISTS dm.daily_funnel_v ON CLUSTER {{cluster}} AS
SELECT report_date, visitors, viewed, carted, purchased, pageviews, cart_adds, purchases, _version, _load_id, _load_ts
FROM (SELECT * FROM dm.daily_funnel_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS report_date, max(_version) AS committed_version
    FROM dm.load_ledger_dist
    WHERE target = 'daily_funnel'
    GROUP BY report_date
) USING report_date
WHERE _version >= committed_version;

CREATE VIEW IF NOT EXISTS dm.daily_revenue_v ON CLUSTER {{cluster}} AS
SELECT report_date, category, orders, units, revenue, aov, _version, _load_id, _load_ts
FROM (SELECT * FROM dm.daily_revenue_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS report_date, max(_version) AS committed_version
    FROM dm.load_ledger_dist
    WHERE target = 'daily_revenue'
    GROUP BY report_date
) USING report_date
WHERE _version >= committed_version;

CREATE VIEW IF NOT EXISTS dm.daily_dq_errors_v ON CLUSTER {{cluster}} AS
SELECT report_date, error_class, error_rows, distinct_errors, _version, _load_id, _load_ts
FROM (SELECT * FROM dm.daily_dq_errors_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS report_date, max(_version) AS committed_version
    FROM dm.load_ledger_dist
    WHERE target = 'daily_dq_errors'
    GROUP BY report_date
) USING report_date
WHERE _version >= committed_version;
