-- dds read views. Consumers (dm transforms, analysts, checks) read these, never the tables.
--
-- The committed-version filter (see 45-dds-tables.sql): FINAL keeps each grain key's newest row;
-- the join to the ledger keeps it only if it is not older than its day's newest commit. The filter
-- is "version >= threshold of the row's own day", and the day is part of the grain key, so it
-- gives the same rows whether the server applies it before or after FINAL's collapse (18.16 may
-- move WHERE conditions to PREWHERE): the newest version of a key passes exactly when some version
-- does. The join runs on the initiator (both sides are subqueries), so no GLOBAL is needed.
-- 18.16 pushes no predicate into a view: a filter on a _v view reads the whole table first. Fine
-- at this stand's volume; the transforms that need a day range read the _dist tables themselves.

-- Hits in DDS terms: snake_case names (WatchID → event_id, UTCEventTime → event_time), event_time in
-- the counter's zone, device codes as words (unknown codes pass through as their number). VisitID
-- (the generator's own visit id, kept in ODS for checks), Sign (always 1), the raw ecommerce JSON
-- and _load_ts stay in ODS. A view, not a table: it adds nothing that needs storing.
CREATE VIEW IF NOT EXISTS dds.event_v ON CLUSTER {{cluster}} AS
SELECT
    WatchID AS event_id,
    ClientID AS client_id,
    CounterID AS counter_id,
    EventDate AS event_date,
    toTimeZone(UTCEventTime, 'Europe/Samara') AS event_time,
    ClientTimeZone AS client_time_zone,
    EventType AS event_type,
    URL AS url,
    Referer AS referer,
    Title AS title,
    UTMSource AS utm_source,
    UTMMedium AS utm_medium,
    UTMCampaign AS utm_campaign,
    UTMContent AS utm_content,
    UTMTerm AS utm_term,
    LastTrafficSource AS last_traffic_source,
    HasGCLID AS has_gclid,
    YCLID AS yclid,
    Browser AS browser,
    BrowserMajorVersion AS browser_major_version,
    BrowserLanguage AS browser_language,
    OperatingSystem AS operating_system,
    OperatingSystemRoot AS operating_system_root,
    transform(DeviceCategory, [1, 2, 3, 4], ['desktop', 'mobile', 'tablet', 'tv'], toString(DeviceCategory)) AS device_category,
    MobilePhoneModel AS mobile_phone_model,
    ScreenWidth AS screen_width,
    ScreenHeight AS screen_height,
    IPAddress AS ip_address,
    RegionCountry AS region_country,
    RegionCity AS region_city,
    RegionCountryID AS region_country_id,
    RegionCityID AS region_city_id,
    GoalsReached AS goals_reached,
    ParsedParamsKey1 AS parsed_params_key1,
    purchaseID AS purchase_id,
    purchaseRevenue AS purchase_revenue,
    purchaseCurrency AS purchase_currency,
    purchaseCoupon AS purchase_coupon,
    productID AS product_id,
    productName AS product_name,
    productCategory AS product_category,
    productPrice AS product_price,
    productQuantity AS product_quantity,
    productEventType AS product_event_type
FROM ods.event_v;

-- What is committed: per target and day, the newest version, its run and how many rows it wrote.
CREATE VIEW IF NOT EXISTS dds.load_ledger_v ON CLUSTER {{cluster}} AS
SELECT
    target,
    data_date,
    max(_version) AS committed_version,
    argMax(row_count, _version) AS row_count,
    argMax(_load_id, _version) AS load_id,
    argMax(_started_at, _version) AS started_at,
    argMax(_load_ts, _version) AS committed_at
FROM dds.load_ledger_dist
GROUP BY target, data_date;

CREATE VIEW IF NOT EXISTS dds.order_v ON CLUSTER {{cluster}} AS
SELECT
    order_id, user_id, status, order_date, created_at, updated_at,
    items_total, discount, delivery, total, item_sku, item_quantity, item_price, snapshot_date,
    _version, _load_id, _load_ts
FROM (SELECT * FROM dds.order_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS order_date, max(_version) AS committed_version
    FROM dds.load_ledger_dist
    WHERE target = 'order'
    GROUP BY order_date
) USING order_date
WHERE _version >= committed_version;

CREATE VIEW IF NOT EXISTS dds.session_v ON CLUSTER {{cluster}} AS
SELECT
    session_id, client_id, session_date, started_at, finished_at, duration_seconds,
    events_total, pageviews, cart_adds, purchases, entry_url, exit_url,
    utm_source, utm_medium, utm_campaign, utm_content, utm_term, device_category, region_city,
    _version, _load_id, _load_ts
FROM (SELECT * FROM dds.session_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS session_date, max(_version) AS committed_version
    FROM dds.load_ledger_dist
    WHERE target = 'session'
    GROUP BY session_date
) USING session_date
WHERE _version >= committed_version;

-- Identity pairs: every (client_id, user_id) seen on any committed day, with the days it was seen.
CREATE VIEW IF NOT EXISTS dds.identity_v ON CLUSTER {{cluster}} AS
SELECT
    client_id,
    user_id,
    min(match_date) AS first_match_date,
    max(match_date) AS last_match_date,
    sum(purchases) AS purchases
FROM (SELECT * FROM dds.identity_dist FINAL)
ANY INNER JOIN
(
    SELECT data_date AS match_date, max(_version) AS committed_version
    FROM dds.load_ledger_dist
    WHERE target = 'identity'
    GROUP BY match_date
) USING match_date
WHERE _version >= committed_version
GROUP BY client_id, user_id;
