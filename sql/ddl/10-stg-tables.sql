-- stg: raw landing, as the Kafka readers delivered it.
--
-- A hit's fields are stored in the form the hits reader takes them (90-hits-ingest.sql): every
-- number as Float64 and every text as String, because 18.16's JSONEachRow reader has no
-- skip-broken-messages setting and stops at the first value it cannot parse into its column. A
-- Float64 column takes any JSON number (negative, fractional, huge), a quoted number, "" and null
-- (NaN); ids below 2^53, the contract's bound, survive it exactly. Each row also carries the
-- ingest's verdict on it, error_class ('' = valid), which routes it to ods.event or
-- ods.event_errors (see 90-hits-ingest.sql).
--
-- 18.16 has no Kafka virtual columns: kafka_partition and kafka_offset are NULL there and set on
-- servers that have them (platform layer). 18.16 has no table TTL either: stg's three-day
-- retention exists only where the server can enforce it.

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
    kafka_topic {{platform.low_cardinality_string}},
    kafka_partition Nullable(UInt64),
    kafka_offset Nullable(UInt64),
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/hits_raw', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY _load_ts
{{platform.stg_retention}};

-- Each node's hits reader lands what it consumed in its own shard; the Distributed table is for
-- reading the whole landing zone.
CREATE TABLE IF NOT EXISTS stg.hits_raw_dist ON CLUSTER {{cluster}} AS stg.hits_raw
ENGINE = Distributed({{cluster}}, stg, hits_raw, rand());

-- Order snapshots, one raw JSON document per row, written by orders_ingest (_load_id = its run).
CREATE TABLE IF NOT EXISTS stg.orders_raw ON CLUSTER {{cluster}}
(
    raw String,
    kafka_topic {{platform.low_cardinality_string}},
    kafka_partition Nullable(UInt64),
    kafka_offset Nullable(UInt64),
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/stg/orders_raw', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY (_load_id, _load_ts)
{{platform.stg_retention}};

CREATE TABLE IF NOT EXISTS stg.orders_raw_dist ON CLUSTER {{cluster}} AS stg.orders_raw
ENGINE = Distributed({{cluster}}, stg, orders_raw, cityHash64(raw));

-- The orders reader: node 1 only (no ON CLUSTER), topic orders, group clickstream_orders, and no
-- materialised view. orders_ingest pulls one batch with a direct
--   INSERT INTO stg.orders_raw_dist SELECT raw, … FROM stg.orders_raw_kafka
-- which commits the offsets it read (18.16 always does; modern servers get
-- kafka_commit_on_select = 1 and need stream_like_engine_allow_direct_select = 1 on the query).
-- Each message arrives whole in `raw`: RawBLOB on modern servers; on 18.16, which has no
-- whole-message format, TabSeparated with one column, which keeps a JSON document intact as
-- long as it has no raw tab and no backslash escape (order documents have neither). Order
-- documents hold an array of objects (items) that no 18.16 JSONEachRow column could take.
-- A reader takes nothing until the first SELECT: creating it here does not consume.
CREATE TABLE IF NOT EXISTS stg.orders_raw_kafka
(
    raw String
)
{{orders_reader_engine}};
