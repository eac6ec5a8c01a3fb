-- dds.session for the run's days, then the commit row of each day.
-- Scope: the run's days (counter days, EventDate). Account: etl (INSERT … SELECT only).
--
-- 18.16 has no window functions, so sessionisation works on arrays: all valid hits of a client and
-- day are gathered into one array of tuples and sorted (tuples sort by their first elements: Unix
-- second, then event id, the order the gap rule is defined on). A hit opens a session when it is
-- the day's first or comes more than 1800 s after the previous one; `starts` holds the indexes of
-- those hits, `ends` the index before the next start; ARRAY JOIN turns each (start, end) pair into
-- one session row. Sessions never cross midnight: the group is (client, counter day).
-- The read is ods.event_dist FINAL with the day filter on the shards (EventDate is the partition
-- and a key column, so it is safe with FINAL); grouping runs distributed and each client's hits sit
-- on one shard. Tuple fields: 1 second, 2 event id, 3 type, 4 URL, 5-9 UTM source, medium,
-- campaign, content, term, 10 device code, 11 city.

INSERT INTO dds.session_dist
(
    session_id, client_id, session_date, started_at, finished_at, duration_seconds,
    events_total, pageviews, cart_adds, purchases, entry_url, exit_url,
    utm_source, utm_medium, utm_campaign, utm_content, utm_term, device_category, region_city,
    _version, _load_id, _load_ts
)
SELECT
    cityHash64(client_id, first_hit.1) AS session_id,
    client_id,
    session_date,
    toDateTime(first_hit.1, 'Europe/Samara') AS started_at,
    toDateTime(last_hit.1, 'Europe/Samara') AS finished_at,
    toUInt32(last_hit.1 - first_hit.1) AS duration_seconds,
    toUInt32(length(session_hits)) AS events_total,
    toUInt32(arrayCount(h -> h.3 = 'pageview', session_hits)) AS pageviews,
    toUInt32(arrayCount(h -> h.3 = 'add_to_cart', session_hits)) AS cart_adds,
    toUInt32(arrayCount(h -> h.3 = 'purchase', session_hits)) AS purchases,
    first_hit.4 AS entry_url,
    last_hit.4 AS exit_url,
    first_hit.5 AS utm_source,
    first_hit.6 AS utm_medium,
    first_hit.7 AS utm_campaign,
    first_hit.8 AS utm_content,
    first_hit.9 AS utm_term,
    transform(first_hit.10, [1, 2, 3, 4], ['desktop', 'mobile', 'tablet', 'tv'], toString(first_hit.10)) AS device_category,
    first_hit.11 AS region_city,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT
        client_id,
        session_date,
        arraySlice(hits, first_index, last_index - first_index + 1) AS session_hits,
        hits[first_index] AS first_hit,
        hits[last_index] AS last_hit
    FROM
    (
        SELECT
            client_id,
            session_date,
            hits,
            arrayFilter(i -> i = 1 OR toInt64(hits[i].1) - toInt64(hits[i - 1].1) > 1800, arrayEnumerate(hits)) AS starts,
            arrayMap(k -> if(k < length(starts), toUInt64(starts[k + 1] - 1), length(hits)), arrayEnumerate(starts)) AS ends
        FROM
        (
            SELECT
                ClientID AS client_id,
                EventDate AS session_date,
                arraySort(groupArray((
                    toUInt32(UTCEventTime), WatchID, toString(EventType), URL,
                    UTMSource, UTMMedium, UTMCampaign, UTMContent, UTMTerm, DeviceCategory, RegionCity
                ))) AS hits
            FROM ods.event_dist FINAL
            WHERE EventDate IN {{run.date_set}}
            GROUP BY client_id, session_date
        )
    )
    ARRAY JOIN starts AS first_index, ends AS last_index
);

{{ledger.commit(session, session_date)}};
