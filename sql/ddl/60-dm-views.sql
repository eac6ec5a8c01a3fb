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

CREATE VIEW IF NOT EXISTS dm.purchase_vs_orders_v ON CLUSTER {{cluster}} AS
SELECT
    order_day, order_id, purchase_day, purchase_hits, declared_revenue, declared_items_total,
    status, items_total, total, mismatch_class, _version, _load_id, _load_ts
FROM (SELECT * FROM dm.purchase_vs_orders_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS order_day, max(_version) AS committed_version
    FROM dm.load_ledger_dist
    WHERE target = 'purchase_vs_orders'
    GROUP BY order_day
) USING order_day
WHERE _version >= committed_version;

-- The published DQ results: per day, the rows of the run that made the day's newest commit (FINAL
-- keeps the newest try of each check of that run). A run that wrote rows but never published them
-- is not shown.
CREATE VIEW IF NOT EXISTS dm.dq_summary_v ON CLUSTER {{cluster}} AS
SELECT
    data_date, check_name, reference_rows, actual_rows, failed_rows, status, offending_keys,
    _load_id AS run_id, _version, _load_ts
FROM (SELECT * FROM dm.dq_summary_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date, argMax(_load_id, _version) AS _load_id
    FROM dm.load_ledger_dist
    WHERE target = 'dq_summary'
    GROUP BY data_date
) USING (data_date, _load_id);
