-- ods: typed, deduplicated, replicated, sharded; one _dist table per local table.

-- Valid hits. WatchID is deterministic, so a replayed day collapses: ReplacingMergeTree on the
-- sorting key (which ends in WatchID), newest _load_ts kept. Read with FINAL (ods.event_v) or
-- uniqExact(WatchID) for exact counts before merges catch up. Sharded by ClientID, so every
-- version of a hit, and every hit of a visitor, lands on one shard.
CREATE TABLE IF NOT EXISTS ods.event ON CLUSTER {{cluster}}
(
    WatchID UInt64,
    VisitID UInt64,
    ClientID UInt64,
    CounterID UInt32,
    EventDate Date,
    UTCEventTime DateTime('UTC'),
    ClientTimeZone Int16,
    EventType {{platform.low_cardinality_string}},
    Sign Int8,
    URL String,
    Referer String,
    Title String,
    UTMSource String,
    UTMMedium String,
    UTMCampaign String,
    UTMContent String,
    UTMTerm String,
    LastTrafficSource String,
    HasGCLID UInt8,
    YCLID UInt64,
    Browser String,
    BrowserMajorVersion UInt16,
    BrowserLanguage String,
    OperatingSystem String,
    OperatingSystemRoot String,
    DeviceCategory UInt8,
    MobilePhoneModel String,
    ScreenWidth UInt16,
    ScreenHeight UInt16,
    IPAddress String,
    RegionCountry String,
    RegionCity String,
    RegionCountryID UInt32,
    RegionCityID UInt32,
    GoalsReached Array(UInt32),
    ParsedParamsKey1 Array(String),
    purchaseID Array(String),
    purchaseRevenue Array(Decimal(18, 2)),
    purchaseCurrency Array(String),
    purchaseCoupon Array(String),
    productID Array(String),
    productName Array(String),
    productCategory Array(String),
    productPrice Array(Int64),
    productQuantity Array(UInt64),
    productEventType Array(String),
    ecommerce String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/ods/event', '{replica}', _load_ts)
PARTITION BY EventDate
ORDER BY (CounterID, EventDate, intHash32(ClientID), WatchID)
SAMPLE BY intHash32(ClientID);

CREATE TABLE IF NOT EXISTS ods.event_dist ON CLUSTER {{cluster}} AS ods.event
ENGINE = Distributed({{cluster}}, ods, event, cityHash64(ClientID));

-- Hits that failed validation: the same row as stg.hits_raw (the reason in error_class, every field
-- as the reader took it, so SELECT … FORMAT JSONEachRow gives the message back, and where it came
-- from), kept a month where the server has TTL. A replayed message (a step's play task run again)
-- lands again: the sorting key is the hit's own fields (the fingerprint the checks and
-- dm.daily_dq_errors count by), the partition and the shard are functions of them too, so its
-- copies share a part range and collapse, the newest _load_ts kept. Read with FINAL
-- (ods.event_errors_v) for exact counts before merges catch up.
CREATE TABLE IF NOT EXISTS ods.event_errors ON CLUSTER {{cluster}} AS stg.hits_raw
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/ods/event_errors', '{replica}', _load_ts)
PARTITION BY toYYYYMM(toDateOrZero(EventDate))
ORDER BY (error_class, EventDate, WatchID, VisitID, ClientID, UTCEventTime, EventType, URL, Referer, IPAddress, ScreenWidth, ScreenHeight)
{{platform.errors_retention}};

CREATE TABLE IF NOT EXISTS ods.event_errors_dist ON CLUSTER {{cluster}} AS ods.event_errors
ENGINE = Distributed({{cluster}}, ods, event_errors, cityHash64(WatchID, VisitID, ClientID, EventDate, UTCEventTime, EventType, URL));


-- Orders, versioned by snapshot_date: the newest snapshot that holds an order wins (ties between
-- equal updated_at made that column useless as a version). Sharded by order_id, so every version
-- of an order lands on one shard. On 18.16 the instants keep whole seconds (no DateTime64).
CREATE TABLE IF NOT EXISTS ods.order ON CLUSTER {{cluster}}
(
    order_id String,
    user_id UInt64,
    status {{platform.low_cardinality_string}},
    created_at {{platform.instant_type}},
    updated_at {{platform.instant_type}},
    items_total Decimal(18, 2),
    discount Decimal(18, 2),
    delivery Decimal(18, 2),
    total Decimal(18, 2),
    items String,
    snapshot_date Date,
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/ods/order', '{replica}', snapshot_date)
PARTITION BY toDate(created_at)
ORDER BY order_id;

CREATE TABLE IF NOT EXISTS ods.order_dist ON CLUSTER {{cluster}} AS ods.order
ENGINE = Distributed({{cluster}}, ods, order, cityHash64(order_id));

-- Order documents orders_ingest could not parse: the raw document and the reason.
CREATE TABLE IF NOT EXISTS ods.order_errors ON CLUSTER {{cluster}}
(
    raw String,
    error_class {{platform.low_cardinality_string}},
    _load_id String,
    _load_ts {{platform.instant_type}}
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/ods/order_errors', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY (error_class, _load_id)
{{platform.errors_retention}};

CREATE TABLE IF NOT EXISTS ods.order_errors_dist ON CLUSTER {{cluster}} AS ods.order_errors
ENGINE = Distributed({{cluster}}, ods, order_errors, cityHash64(raw));
