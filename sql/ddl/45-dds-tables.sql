-- dds: facts built from ODS by the dds_transform DAG (sql/etl/dds/), as the `etl` account.
--
-- Idempotency without DDL. `etl` has allow_ddl=0 on 18.16: no TRUNCATE, no DROP/REPLACE
-- PARTITION, no ALTER … DELETE, no OPTIMIZE. So a transform never removes rows; it appends a whole
-- new version of every day it builds, and readers see the newest committed version:
--   * every table carries _version (UInt64, strictly increasing per run, chosen by the task),
--     _load_id (the DAG run) and _load_ts;
--   * a run writes ALL rows of each of its days with its _version, then commits: one row per
--     (target, day) in dds.load_ledger, written only after the data statement succeeded;
--   * the _v views (50-dds-views.sql) keep, per grain key, the newest row (ReplacingMergeTree,
--     read with FINAL), and drop rows older than their day's newest commit. So a rerun that
--     produces the same rows changes nothing, and a rerun that produces FEWER rows (a late hit
--     joins two sessions into one) hides the rows it no longer writes, which plain
--     ReplacingMergeTree would keep forever;
--   * merges garbage-collect superseded versions of a key; only keys a rerun no longer writes
--     stay on disk, hidden by the views (rare: a day's output shrinks only when its input changed).
-- A run that fails between its data and its commit leaves the previous commit in force; keys it
-- already rewrote show their new rows (identical when the input did not change), and the red task
-- is rerun.
--
-- Sharding rule: each _dist table's key is a deterministic function of the grain key, so every
-- version of a row lands on the shard that holds the versions it supersedes (FINAL and the
-- ReplacingMergeTree merges work per shard and could never collapse versions on two shards). It
-- also equals the ODS key where the grain allows (client_id for sessions and identity as in
-- ods.event_dist, order_id for orders as in ods.order_dist), so a shard's DDS rows come from its
-- own ODS rows. Inserts go through the _dist tables with insert_distributed_sync=1 (18.16 has no
-- parallel_distributed_insert_select: an INSERT … SELECT into a Distributed table selects on the
-- initiator and routes each row by the target's key), so no transform depends on where it runs.
-- Partitions are monthly: nothing here uses partition operations, and 18.16 merges fewer, larger
-- parts better. ReplacingMergeTree collapses only within a partition; every partition key below is
-- a function of the grain's date, so versions of a row share a partition.
--
-- Times are in the counter's zone, Europe/Samara (the passport's counter_time_zone); ODS keeps UTC.
-- DateTime, not DateTime64: 18.16 has no DateTime64 and ODS keeps whole seconds there.

-- The commit log of every dds build: one row per (target, day, run). A day's committed version is
-- max(_version) for its (target, data_date); _started_at is when that run began reading ODS, the
-- watermark sql/etl/00-dds-dates-to-process.sql compares new ODS rows with.
CREATE TABLE IF NOT EXISTS dds.load_ledger ON CLUSTER {{cluster}}
(
    target String,
    data_date Date,
    row_count UInt64,
    _version UInt64,
    _load_id String,
    _started_at DateTime('UTC'),
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dds/load_ledger', '{replica}', _version)
ORDER BY (target, data_date);

CREATE TABLE IF NOT EXISTS dds.load_ledger_dist ON CLUSTER {{cluster}} AS dds.load_ledger
ENGINE = Distributed({{cluster}}, dds, load_ledger, cityHash64(target, data_date));

-- Orders as the newest ODS snapshot shows them, one row per order_id; order_date is the Samara date
-- of created_at (fixed for an order, so all its versions share a day and a partition). items is
-- split into three parallel arrays. snapshot_date says which snapshot the row was built from, so
-- the dates-to-process query can see that ODS holds a newer one.
CREATE TABLE IF NOT EXISTS dds.order ON CLUSTER {{cluster}}
(
    order_id String,
    user_id UInt64,
    status String,
    order_date Date,
    created_at DateTime('Europe/Samara'),
    updated_at DateTime('Europe/Samara'),
    items_total Decimal(18, 2),
    discount Decimal(18, 2),
    delivery Decimal(18, 2),
    total Decimal(18, 2),
    item_sku Array(String),
    item_quantity Array(UInt32),
    item_price Array(Decimal(18, 2)),
    snapshot_date Date,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dds/order', '{replica}', _version)
PARTITION BY toYYYYMM(order_date)
ORDER BY (order_date, order_id);

CREATE TABLE IF NOT EXISTS dds.order_dist ON CLUSTER {{cluster}} AS dds.order
ENGINE = Distributed({{cluster}}, dds, order, cityHash64(order_id));

-- Visits: a client's valid hits of one counter day, in (event_time, event_id) order; a gap over
-- 30 minutes (1800 s) opens a new session. The grain is (session_date, client_id, started_at);
-- session_id = cityHash64(client_id, started_at as Unix seconds) is a pure function of it.
-- Entry/exit URL come from the first/last hit, UTM tags, device and city from the first.
CREATE TABLE IF NOT EXISTS dds.session ON CLUSTER {{cluster}}
(
    session_id UInt64,
    client_id UInt64,
    session_date Date,
    started_at DateTime('Europe/Samara'),
    finished_at DateTime('Europe/Samara'),
    duration_seconds UInt32,
    events_total UInt32,
    pageviews UInt32,
    cart_adds UInt32,
    purchases UInt32,
    entry_url String,
    exit_url String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_content String,
    utm_term String,
    device_category String,
    region_city String,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dds/session', '{replica}', _version)
PARTITION BY toYYYYMM(session_date)
ORDER BY (session_date, client_id, started_at);

CREATE TABLE IF NOT EXISTS dds.session_dist ON CLUSTER {{cluster}} AS dds.session
ENGINE = Distributed({{cluster}}, dds, session, cityHash64(client_id));

-- Identity: a cookie (client_id) belongs to a person (user_id) when one of its purchase hits names
-- an order (purchaseID[1] = order_id) whose backend record carries that user_id. Kept per purchase
-- day, so it is rebuilt day by day like everything else; dds.identity_v folds the days into pairs.
CREATE TABLE IF NOT EXISTS dds.identity ON CLUSTER {{cluster}}
(
    match_date Date,
    client_id UInt64,
    user_id UInt64,
    purchases UInt32,
    _version UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dds/identity', '{replica}', _version)
PARTITION BY toYYYYMM(match_date)
ORDER BY (match_date, client_id, user_id);

CREATE TABLE IF NOT EXISTS dds.identity_dist ON CLUSTER {{cluster}} AS dds.identity
ENGINE = Distributed({{cluster}}, dds, identity, cityHash64(client_id));
