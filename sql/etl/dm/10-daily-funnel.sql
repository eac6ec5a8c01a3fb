-- dm.daily_funnel for the run's days, then the commit row of each day.
-- Scope: the run's days (counter days). Account: etl.
--
-- Per cookie and day, windowFunnel(86400) gives how far its hits go along pageview → add_to_cart
-- → purchase in time order (a cart before any pageview does not count as step 2). Hits come from
-- ODS with the day filter on the shards, the same rows dds.event_v shows (that view cannot take
-- the filter on 18.16, which pushes no predicate into views, so reading it would scan every day).

INSERT INTO dm.daily_funnel_dist
(
    report_date, visitors, viewed, carted, purchased, pageviews, cart_adds, purchases,
    _version, _load_id, _load_ts
)
SELECT
    report_date,
    count() AS visitors,
    countIf(level >= 1) AS viewed,
    countIf(level >= 2) AS carted,
    countIf(level >= 3) AS purchased,
    sum(client_pageviews) AS pageviews,
    sum(client_cart_adds) AS cart_adds,
    sum(client_purchases) AS purchases,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT
        EventDate AS report_date,
        ClientID AS client_id,
        windowFunnel(86400)(UTCEventTime, EventType = 'pageview', EventType = 'add_to_cart', EventType = 'purchase') AS level,
        countIf(EventType = 'pageview') AS client_pageviews,
        countIf(EventType = 'add_to_cart') AS client_cart_adds,
        countIf(EventType = 'purchase') AS client_purchases
    FROM ods.event_dist FINAL
    WHERE EventDate IN {{run.date_set}}
    GROUP BY report_date, client_id
)
GROUP BY report_date;

{{ledger.commit(daily_funnel, report_date)}};
