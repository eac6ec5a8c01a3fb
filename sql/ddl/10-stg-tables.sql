-- stg: raw landing, as the loader (src/loader, docs/loader.md) delivered it from Kafka.
--
-- A hit's fields are stored in a form that always parses: every number as Float64 and every text
-- as String. A Float64 column takes any JSON number (negative, fractional, huge), a quoted number,
-- "" and null; ids below 2^53, the contract's bound, survive it exactly, and the verdict
-- (90-hits-ingest.sql) refuses the rest as bad_id. So every planted bad hit becomes a row with its
-- reason, not a refused INSERT. The message itself is kept whole in _raw, byte for byte as sent
-- (numbers with all their digits), with the topic, partition and offset it was read at. Each row
-- also carries the verdict, error_class ('' = valid), which routes it to ods.event or
-- ods.event_errors.
--
-- 18.16 has no table TTL: stg's three-day retention exists only where the server can enforce it.

CREATE TABLE IF NOT EXISTS stg.hits_raw ON CLUSTER {{cluster}}
(
    error_class {{platform.low_cardinality_string}},
    WatchID Float64,
    VisitID Float64,
    ClientID Float64,
    CounterID Float64,
    EventDate String,
    UTCEventTime String,
    ClientTimeZone Float64,
    EventType String,
    Sign Float64,
    URL String,
    Referer String,
    Title String,
    UTMSource String,
    UTMMedium String,
    UTMCampaign String,
    UTMContent String,
    UTMTerm String,
    LastTrafficSource String,
    HasGCLID Float64,
    YCLID Float64,
    Browser String,
    BrowserMajorVersion Float64,
    BrowserLanguage String,
    OperatingSystem String,
    OperatingSystemRoot String,
    DeviceCategory Float64,
    MobilePhoneModel String,
    ScreenWidth Float64,
    ScreenHeight Float64,
    IPAddress String,
    RegionCountry String,
    RegionCity String,
    RegionCountryID Float64,
    RegionCityID Float64,
    GoalsReached Array(Float64),
    ParsedParamsKey1 Array(String),
    purchaseID Array(String),
    purchaseRevenue Array(Float64),
    purchaseCurrency Array(String),
    purchaseCoupon Array(String),
    productID Array(String),
    productName Array(String),
    productCategory Array(String),
    productPrice Array(Float64),
    productQuantity Array(Float64),
    productEventType Array(String),
    ecommerce String,
    _raw String,
    kafka_topic {{platform.low_cardinality_string}},
    kafka_partition UInt32,
    kafka_offset UInt64,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/hits_raw', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY _load_ts
{{platform.stg_retention}};

-- The loader lands partition p of topic hits on node p mod 2 (its stg.hits_in, 90-hits-ingest.sql),
-- so each node keeps what it landed in its own shard; the Distributed table reads the whole zone.
CREATE TABLE IF NOT EXISTS stg.hits_raw_dist ON CLUSTER {{cluster}} AS stg.hits_raw
ENGINE = Distributed({{cluster}}, stg, hits_raw, rand());

-- Order snapshots, one raw document per row. The loader lands every message of topic orders here
-- as it arrives, unclaimed (_load_id = ''), with its partition and offset; orders_ingest's
-- pull_batch claims the unclaimed ones under its run id (a copy with _load_id set,
-- sql/etl/orders/10-pull-batch.sql) and parse_batch parses that load. The document stays text
-- here whatever it holds (its verdict, sql/etl/orders/order-verdict.fragment.sql, names what is
-- wrong with it), so only a message that is not UTF-8 or is over the loader's size limit becomes
-- a dead letter instead.
CREATE TABLE IF NOT EXISTS stg.orders_raw ON CLUSTER {{cluster}}
(
    raw String,
    kafka_topic {{platform.low_cardinality_string}},
    kafka_partition UInt32,
    kafka_offset UInt64,
    _load_id String,
    _load_ts {{platform.instant_type}} DEFAULT {{platform.instant_now}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/orders_raw', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY (_load_id, _load_ts)
{{platform.stg_retention}};

CREATE TABLE IF NOT EXISTS stg.orders_raw_dist ON CLUSTER {{cluster}} AS stg.orders_raw
ENGINE = Distributed({{cluster}}, stg, orders_raw, cityHash64(raw));

-- The loader's dead letters: one row per message that could not become a row of its table. Either
-- undecodable, decided before any INSERT (too_large, invalid_utf8, not_json, not_object), or
-- refused by the server for its own data (reason = the exception code's name, error_code = the
-- code, found by splitting the refused batch). raw is the message value as sent, cut to the
-- loader's raw cap (raw_bytes is its full length); topic, partition and offset say where it is.
-- Kept a month where the server has TTL. ORDER BY the message's position: "what happened at
-- offset N" is one range read.
CREATE TABLE IF NOT EXISTS stg.dead_letters ON CLUSTER {{cluster}}
(
    dead_at DateTime('UTC'),
    topic String,
    partition UInt32,
    offset UInt64,
    key Nullable(String),
    raw String,
    raw_bytes UInt32,
    reason String,
    error_code Nullable(Int32),
    error_text String,
    target_table String
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/dead_letters', '{replica}')
PARTITION BY toYYYYMM(dead_at)
ORDER BY (topic, partition, offset, dead_at)
{{platform.dead_letters_retention}};

CREATE TABLE IF NOT EXISTS stg.dead_letters_dist ON CLUSTER {{cluster}} AS stg.dead_letters
ENGINE = Distributed({{cluster}}, stg, dead_letters, cityHash64(topic, partition, offset));

-- The loader's default table (loader.options.defaultTable, docs/loader.md): the rows of a batch held
-- because ClickHouse reported its table absent (dropped, or its database gone) land here on the same
-- node instead of being held for ever, with the table they were meant for in _target_table and the
-- message as sent in _raw, so an operator can see them and move them once the table is back.
CREATE TABLE IF NOT EXISTS stg.loader_default ON CLUSTER {{cluster}}
(
    _target_table String,
    _raw String,
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64,
    _load_ts {{platform.instant_type}} DEFAULT {{platform.instant_now}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/loader_default', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY (_target_table, kafka_topic, kafka_partition, kafka_offset)
{{platform.stg_retention}};
