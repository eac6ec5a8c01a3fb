-- The Kafka-engine ingest the world had before the loader (sql/ddl/90-hits-ingest.sql and the hits
-- tables of 10-stg-tables.sql and 20-ods-tables.sql as of commit 7018b6f), kept ONLY as the
-- benchmarks' baseline (bench/ingest-bench.ts, bench/loader-bench.ts), in a namespace of its own:
-- its own database, the topic and consumer group the bench names. Never applied to the world.
--
-- The chain is the old one, unchanged: the reader <db>.hits_raw_kafka (kafka-engine-reader.sql)
-- → hits_raw_mv (every message with its verdict, error_class, into hits_raw) → event_mv (valid,
-- typed, into event_dist) and event_errors_mv (the rest, into event_errors_dist). Views read
-- hits_raw_mv's output by the name the platform layer gives (the view on 18.16, its target table on
-- modern servers). 18.16 has no TTL and no Kafka virtual columns: the platform layer leaves them out.
--
-- How the reader starts differs from the old file, which created it first and then restarted it
-- (DETACH, ATTACH) so its first read cycle saw every view. Here the reader's name first holds a Null
-- table of the same columns, this file's views are made over it, then the bench drops it and
-- creates the Kafka table (a consumer group with no offsets, reading from the start): the reader
-- begins with every view in place and is never detached. Detaching or dropping an 18.16 reader
-- whose group offsets were set from outside aborted the server (librdkafka assert
-- rd_kafka_cgrp_destroy_final), so the bench does neither.

CREATE DATABASE IF NOT EXISTS {{db}} ON CLUSTER {{cluster}};

CREATE TABLE IF NOT EXISTS {{db}}.hits_raw ON CLUSTER {{cluster}}
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
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{{db}}/hits_raw', '{replica}')
PARTITION BY toDate(_load_ts)
ORDER BY _load_ts;

CREATE TABLE IF NOT EXISTS {{db}}.hits_raw_dist ON CLUSTER {{cluster}} AS {{db}}.hits_raw
ENGINE = Distributed({{cluster}}, {{db}}, hits_raw, rand());

CREATE TABLE IF NOT EXISTS {{db}}.event ON CLUSTER {{cluster}}
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{{db}}/event', '{replica}', _load_ts)
PARTITION BY EventDate
ORDER BY (CounterID, EventDate, intHash32(ClientID), WatchID)
SAMPLE BY intHash32(ClientID);

CREATE TABLE IF NOT EXISTS {{db}}.event_dist ON CLUSTER {{cluster}} AS {{db}}.event
ENGINE = Distributed({{cluster}}, {{db}}, event, cityHash64(ClientID));

CREATE TABLE IF NOT EXISTS {{db}}.event_errors ON CLUSTER {{cluster}} AS {{db}}.hits_raw
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{{db}}/event_errors', '{replica}', _load_ts)
PARTITION BY toYYYYMM(toDateOrZero(EventDate))
ORDER BY (error_class, EventDate, WatchID, VisitID, ClientID, UTCEventTime, EventType, URL, Referer, IPAddress, ScreenWidth, ScreenHeight);

CREATE TABLE IF NOT EXISTS {{db}}.event_errors_dist ON CLUSTER {{cluster}} AS {{db}}.event_errors
ENGINE = Distributed({{cluster}}, {{db}}, event_errors, cityHash64(WatchID, VisitID, ClientID, EventDate, UTCEventTime, EventType, URL));

-- The verdict, exactly as the old file computed it ('' = valid; the first failing check names the reason).
CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.hits_raw_mv ON CLUSTER {{cluster}}
TO {{db}}.hits_raw
AS SELECT
    multiIf(
        WatchID = 0 OR isNaN(WatchID) OR ClientID = 0 OR isNaN(ClientID), 'missing_id',
        NOT (isFinite(WatchID) AND WatchID >= 0 AND WatchID < 9007199254740992 AND WatchID = floor(WatchID)
            AND isFinite(VisitID) AND VisitID >= 0 AND VisitID < 9007199254740992 AND VisitID = floor(VisitID)
            AND isFinite(ClientID) AND ClientID >= 0 AND ClientID < 9007199254740992 AND ClientID = floor(ClientID)), 'bad_id',
        NOT (match(UTCEventTime, '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')
            AND formatDateTime(
                    toDateTimeOrZero(concat(substring(UTCEventTime, 1, 10), ' ', substring(UTCEventTime, 12, 8)), 'UTC'),
                    '%Y-%m-%dT%H:%M:%SZ', 'UTC') = UTCEventTime), 'bad_timestamp',
        NOT (match(EventDate, '^[0-9]{4}-[0-9]{2}-[0-9]{2}$') AND toString(toDateOrZero(EventDate)) = EventDate), 'bad_event_date',
        EventType NOT IN ('pageview', 'add_to_cart', 'purchase'), 'unknown_event_type',
        '') AS error_class,
    *,
    {{hits_topic}} AS kafka_topic,
    {{platform.kafka_partition}} AS kafka_partition,
    {{platform.kafka_offset}} AS kafka_offset,
    {{platform.instant_now}} AS _load_ts
FROM {{db}}.hits_raw_kafka;

-- Valid hits, typed, as the old file typed them.
CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.event_mv ON CLUSTER {{cluster}}
TO {{db}}.event_dist
AS SELECT
    toUInt64(WatchID) AS WatchID,
    toUInt64(VisitID) AS VisitID,
    toUInt64(ClientID) AS ClientID,
    toUInt32(CounterID) AS CounterID,
    toDateOrZero(EventDate) AS EventDate,
    toDateTimeOrZero(concat(substring(UTCEventTime, 1, 10), ' ', substring(UTCEventTime, 12, 8)), 'UTC') AS UTCEventTime,
    toInt16(ClientTimeZone) AS ClientTimeZone,
    EventType,
    toInt8(Sign) AS Sign,
    URL,
    Referer,
    Title,
    UTMSource,
    UTMMedium,
    UTMCampaign,
    UTMContent,
    UTMTerm,
    LastTrafficSource,
    toUInt8(HasGCLID) AS HasGCLID,
    toUInt64(YCLID) AS YCLID,
    Browser,
    toUInt16(BrowserMajorVersion) AS BrowserMajorVersion,
    BrowserLanguage,
    OperatingSystem,
    OperatingSystemRoot,
    toUInt8(DeviceCategory) AS DeviceCategory,
    MobilePhoneModel,
    toUInt16(ScreenWidth) AS ScreenWidth,
    toUInt16(ScreenHeight) AS ScreenHeight,
    IPAddress,
    RegionCountry,
    RegionCity,
    toUInt32(RegionCountryID) AS RegionCountryID,
    toUInt32(RegionCityID) AS RegionCityID,
    arrayMap(x -> toUInt32(x), GoalsReached) AS GoalsReached,
    ParsedParamsKey1,
    purchaseID,
    arrayMap(x -> toDecimal64(toInt64(round(if(isFinite(x) AND abs(x) < 1e13, x, 0) * 100)), 2) / 100, purchaseRevenue) AS purchaseRevenue,
    purchaseCurrency,
    purchaseCoupon,
    productID,
    productName,
    productCategory,
    arrayMap(x -> toInt64(x), productPrice) AS productPrice,
    arrayMap(x -> toUInt64(x), productQuantity) AS productQuantity,
    productEventType,
    ecommerce,
    _load_ts
FROM {{platform.hits_landing_source}}
WHERE error_class = '';

-- Invalid hits, the whole row with its reason.
CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.event_errors_mv ON CLUSTER {{cluster}}
TO {{db}}.event_errors_dist
AS SELECT *
FROM {{platform.hits_landing_source}}
WHERE NOT (error_class = '');
