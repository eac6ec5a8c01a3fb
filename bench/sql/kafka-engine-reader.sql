-- The Kafka-engine reader of a bench namespace (kafka-engine-baseline.sql,
-- kafka-engine-null-landing.sql): one per node (ON CLUSTER) in one consumer group over a
-- 2-partition topic, so each node takes one partition. Its columns take every field of a hit in a
-- form that always parses (on 18.16 one value that does not parse stops the reader). Applied twice:
-- first with the engine ENGINE = Null so the views can be made over it, then, after the
-- bench dropped that, with the Kafka engine, which starts reading with every view in place.

CREATE TABLE IF NOT EXISTS {{db}}.hits_raw_kafka ON CLUSTER {{cluster}}
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
    ecommerce String
)
{{reader_engine}};
