-- dm: the marts, built from dds (and ods.event_errors) by the dm_transform DAG (sql/etl/dm/) as
-- `etl`. The same idempotency scheme as dds (see 45-dds-tables.sql): ReplacingMergeTree(_version)
-- keyed by the grain, a commit row per (target, day) in dm.load_ledger after the data, and _v views
-- that keep the newest row of each key unless it is older than its day's newest commit. So a
-- rerun appends a new version that supersedes the old one, and a day whose rows disappear (a paid
-- order later cancelled removes its category's revenue row) disappears from the view too.
--
-- Every mart's grain starts with report_date, and every _dist key is cityHash64(report_date): a
-- deterministic function of the grain, so every version of a row, and every row of one day, lands
-- on one shard, where FINAL and merges can collapse them. The marts are small (a few rows a day),
-- so putting a day on one shard costs nothing.

CREATE TABLE IF NOT EXISTS dm.load_ledger ON CLUSTER {{cluster}}
(
    target String,
    data_date Date,
    row_count UInt64,
    _version UInt64,
    _load_id String,
    _started_at DateTime('UTC'),
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/load_ledger', '{replica}', _version)
ORDER BY (target, data_date);

CREATE TABLE IF NOT EXISTS dm.load_ledger_dist ON CLUSTER {{cluster}} AS dm.load_ledger
ENGINE = Distributed({{cluster}}, dm, load_ledger, cityHash64(target, data_date));

-- Traffic per counter day: distinct cookies, sessions, pageviews, and known users (distinct
-- user_id behind the day's cookies, through dds.identity_v as known at build time).
CREATE TABLE IF NOT EXISTS dm.daily_traffic ON CLUSTER {{cluster}}
(
    report_date Date,
    visitors UInt64,
    sessions UInt64,
    pageviews UInt64,
    known_users UInt64,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/daily_traffic', '{replica}', _version)
PARTITION BY toYYYYMM(report_date)
ORDER BY report_date;

CREATE TABLE IF NOT EXISTS dm.daily_traffic_dist ON CLUSTER {{cluster}} AS dm.daily_traffic
ENGINE = Distributed({{cluster}}, dm, daily_traffic, cityHash64(report_date));

-- The funnel pageview → add_to_cart → purchase per counter day, by cookie: visitors = cookies with
-- any valid hit that day; viewed/carted/purchased = cookies whose hits reach step 1/2/3 in that
-- order within the day (windowFunnel). The plain event counts per type sit beside it.
CREATE TABLE IF NOT EXISTS dm.daily_funnel ON CLUSTER {{cluster}}
(
    report_date Date,
    visitors UInt64,
    viewed UInt64,
    carted UInt64,
    purchased UInt64,
    pageviews UInt64,
    cart_adds UInt64,
    purchases UInt64,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/daily_funnel', '{replica}', _version)
PARTITION BY toYYYYMM(report_date)
ORDER BY report_date;

CREATE TABLE IF NOT EXISTS dm.daily_funnel_dist ON CLUSTER {{cluster}} AS dm.daily_funnel
ENGINE = Distributed({{cluster}}, dm, daily_funnel, cityHash64(report_date));

-- Revenue of paid orders per order day (Samara date of created_at) × catalog category: orders =
-- distinct orders with a line in the category, units = sum of qty, revenue = sum of price × qty
-- (no discount, no delivery), aov = revenue / orders (truncated to kopecks). A SKU missing from
-- dic.products is counted under category 'unknown'.
CREATE TABLE IF NOT EXISTS dm.daily_revenue ON CLUSTER {{cluster}}
(
    report_date Date,
    category String,
    orders UInt64,
    units UInt64,
    revenue Decimal(18, 2),
    aov Decimal(18, 2),
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/daily_revenue', '{replica}', _version)
PARTITION BY toYYYYMM(report_date)
ORDER BY (report_date, category);

CREATE TABLE IF NOT EXISTS dm.daily_revenue_dist ON CLUSTER {{cluster}} AS dm.daily_revenue
ENGINE = Distributed({{cluster}}, dm, daily_revenue, cityHash64(report_date));

-- Hits the ingest refused, per counter day (the hit's own EventDate, or its load day when that
-- does not parse) and error_class. error_rows counts what landed; distinct_errors counts distinct
-- hits, because ods.event_errors is not deduplicated and a replayed day lands its errors twice.
CREATE TABLE IF NOT EXISTS dm.daily_dq_errors ON CLUSTER {{cluster}}
(
    report_date Date,
    error_class String,
    error_rows UInt64,
    distinct_errors UInt64,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/daily_dq_errors', '{replica}', _version)
PARTITION BY toYYYYMM(report_date)
ORDER BY (report_date, error_class);

CREATE TABLE IF NOT EXISTS dm.daily_dq_errors_dist ON CLUSTER {{cluster}} AS dm.daily_dq_errors
ENGINE = Distributed({{cluster}}, dm, daily_dq_errors, cityHash64(report_date));

-- Every order id the clickstream or the backend knows, reconciled (grain: one order id). The
-- purchase hits (ods.event, grouped by purchaseID[1]) give the declared revenue, the items total of
-- the products they carry and how many purchase hits arrived; the backend (dds.order_v) gives the
-- status, items_total and total. order_day is the backend's order day, else the purchase day.
-- mismatch_class, first match wins: awaiting_order (hits, no backend record yet) → cancelled →
-- lost_event (a backend order without its purchase hit) → duplicate_event (more than one purchase
-- hit) → amount_delta (declared revenue ≠ backend items_total) → match. The hit side is NULL for a
-- lost event, the backend side NULL while an order is awaited. Rebuilt whole every run
-- (sql/etl/dm/50-purchase-vs-orders.sql): an awaited order's row changes when its record arrives.
CREATE TABLE IF NOT EXISTS dm.purchase_vs_orders ON CLUSTER {{cluster}}
(
    order_day Date,
    order_id String,
    purchase_day Nullable(Date),
    purchase_hits UInt32,
    declared_revenue Nullable(Decimal(18, 2)),
    declared_items_total Nullable(Decimal(18, 2)),
    status Nullable(String),
    items_total Nullable(Decimal(18, 2)),
    total Nullable(Decimal(18, 2)),
    mismatch_class String,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/purchase_vs_orders', '{replica}', _version)
PARTITION BY toYYYYMM(order_day)
ORDER BY (order_day, order_id);

CREATE TABLE IF NOT EXISTS dm.purchase_vs_orders_dist ON CLUSTER {{cluster}} AS dm.purchase_vs_orders
ENGINE = Distributed({{cluster}}, dm, purchase_vs_orders, cityHash64(order_day));

-- The dq_check DAG's results (sql/dq/): per data date and check, the rows on the reference side,
-- the rows on the checked side, how many keys fail, pass/fail, and up to 20 of the failing keys.
-- Every dq run keeps its own rows (the key holds _load_id, the run): a repeated task of the same run
-- collapses onto its earlier rows, and the history of runs stays for the World page. A run's rows
-- are published per day by one commit row in dm.load_ledger (target 'dq_summary'), written after
-- every check of the run wrote its rows; dm.dq_summary_v shows, per day, only the rows of the run
-- whose commit is that day's newest, so a day switches from one run's results to the next at once.
CREATE TABLE IF NOT EXISTS dm.dq_summary ON CLUSTER {{cluster}}
(
    data_date Date,
    check_name String,
    reference_rows UInt64,
    actual_rows UInt64,
    failed_rows UInt64,
    status String,
    offending_keys Array(String),
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dm/dq_summary', '{replica}', _version)
PARTITION BY toYYYYMM(data_date)
ORDER BY (data_date, check_name, _load_id);

CREATE TABLE IF NOT EXISTS dm.dq_summary_dist ON CLUSTER {{cluster}} AS dm.dq_summary
ENGINE = Distributed({{cluster}}, dm, dq_summary, cityHash64(data_date));
