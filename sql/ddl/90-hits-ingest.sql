-- The hits landing and its routing views, the last file of the world's DDL. The loader
-- (src/loader, docs/loader.md) inserts each hit of topic hits, as sent, into stg.hits_in on the
-- node that owns its partition (partition p → node p mod 2), with the message kept whole in _raw
-- and its topic, partition and offset. stg.hits_in stores nothing (engine Null): the views below
-- carry each inserted block on, in the same INSERT, and the loader commits a message's offset only
-- after that INSERT returned (with insert_distributed_sync = 1, so ODS on both shards holds the
-- rows by then). A data error of one hit fails its whole INSERT; the loader splits the batch to
-- isolate it and writes it to stg.dead_letters, and the rest lands.
--
-- Because stg.hits_in keeps nothing, a hit inserted before every view exists would be lost. The
-- loader therefore consumes only after world_initialize's DDL tasks, from its start_ingest task
-- (the lifecycle the seed gives the DAGs); this replaces the Kafka reader that had to be created
-- last and restarted.
--
-- The columns take every field in a form that always parses (10-stg-tables.sql), so a planted bad
-- hit is a row with a reason, not a refused INSERT.
--
-- The chain: stg.hits_in → stg.hits_raw_mv (lands every hit in stg.hits_raw with its verdict,
-- error_class) → ods.event_mv (error_class = '', typed, into ods.event_dist) and
-- ods.event_errors_mv (its literal negation, into ods.event_errors_dist). So the two routes read
-- one stored verdict and every hit lands in exactly one of them.
--
-- The routing views read stg.hits_raw_mv's output: on 18.16 a view's rows cascade to views that
-- read that VIEW by name, on modern servers to views that read its TARGET table, and the platform
-- layer names the right one.

CREATE TABLE IF NOT EXISTS stg.hits_in ON CLUSTER {{cluster}}
(
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
    kafka_topic String,
    kafka_partition UInt32,
    kafka_offset UInt64
)
ENGINE = Null;

-- The verdict, computed once. '' means valid; otherwise the first failing check names the reason,
-- in the generator's order (ids, then time, then event type):
--   missing_id          WatchID or ClientID is 0, "", null or absent
--   bad_id              WatchID, VisitID or ClientID is not an integer in [0, 2^53)
--   bad_timestamp       UTCEventTime is not a real instant written YYYY-MM-DDTHH:MM:SSZ
--   bad_event_date      EventDate is not a real date written YYYY-MM-DD
--   unknown_event_type  EventType is not pageview, add_to_cart or purchase
-- It must be total: a view that throws, or a filter that yields NULL, fails the INSERT of every hit
-- beside it. Every
-- input is a non-Nullable Float64 or String, and only functions that cannot throw are used
-- (match, the …OrZero parsers, comparisons). Parses are checked by round trip (formatted back, the
-- value must equal the text), which rejects what 18.16's lenient parsers would wrap around
-- (2026-02-31, 25:61:61).
CREATE MATERIALIZED VIEW IF NOT EXISTS stg.hits_raw_mv ON CLUSTER {{cluster}}
TO stg.hits_raw
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
    {{platform.instant_now}} AS _load_ts
FROM stg.hits_in;

-- Valid hits, typed. The conversions cannot throw either: Float64 → integer casts wrap rather than
-- fail, dates use the …OrZero parsers, and money is clamped before it becomes Decimal (rubles →
-- whole cents → Decimal, exact to 2 decimals). The typed columns reuse the field names; the filter
-- reads only error_class, which no alias shadows.
CREATE MATERIALIZED VIEW IF NOT EXISTS ods.event_mv ON CLUSTER {{cluster}}
TO ods.event_dist
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
CREATE MATERIALIZED VIEW IF NOT EXISTS ods.event_errors_mv ON CLUSTER {{cluster}}
TO ods.event_errors_dist
AS SELECT *
FROM {{platform.hits_landing_source}}
WHERE NOT (error_class = '');
