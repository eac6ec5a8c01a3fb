-- The days dds_transform must (re)build, derived from the data, with the reasons for each.
-- One row per day: d (Date), reasons (Array(String)). Account: etl (SELECT only).
--
--   new_event_date   ODS holds valid hits of a day DDS has never committed (dds.load_ledger)
--   late_rows        ODS rows of a committed day were loaded at or after that build began reading
--                    (minus run.late_margin_seconds: an ODS row's _load_ts is stamped by the
--                    Kafka reader, and the Distributed hop to its shard can take a few seconds)
--   recent           the newest run.redo_days event day(s) again: a cheap guard for anything
--                    the watermark cannot see
--   order_changed    an order's newest ODS snapshot is newer than the one dds.order_v was built
--                    from, or the order is not in DDS at all (its Samara order day)
-- Every side is a subquery, so each JOIN runs on the initiator over the full sets.

SELECT d, arraySort(groupUniqArray(reason)) AS reasons
FROM
(
    SELECT event_date AS d, 'new_event_date' AS reason
    FROM (SELECT DISTINCT EventDate AS event_date FROM ods.event_dist)
    ANY LEFT JOIN
    (
        SELECT data_date AS event_date, 1 AS built
        FROM dds.load_ledger_dist
        WHERE target = 'session'
        GROUP BY event_date
    ) USING event_date
    WHERE built = 0

    UNION ALL

    SELECT event_date AS d, 'late_rows' AS reason
    FROM (SELECT EventDate AS event_date, max(_load_ts) AS loaded_until FROM ods.event_dist GROUP BY event_date)
    ANY INNER JOIN
    (
        SELECT data_date AS event_date, argMax(_started_at, _version) AS build_started_at
        FROM dds.load_ledger_dist
        WHERE target = 'session'
        GROUP BY event_date
    ) USING event_date
    WHERE loaded_until >= build_started_at - {{run.late_margin_seconds}}

    UNION ALL

    SELECT event_date AS d, 'recent' AS reason
    FROM (SELECT DISTINCT EventDate AS event_date FROM ods.event_dist ORDER BY event_date DESC LIMIT {{run.redo_days}})

    UNION ALL

    SELECT order_date AS d, 'order_changed' AS reason
    FROM
    (
        SELECT order_id, toDate(toTimeZone(created_at, 'Europe/Samara')) AS order_date, snapshot_date
        FROM ods.order_v
    )
    ANY LEFT JOIN
    (
        SELECT order_id, snapshot_date AS built_snapshot_date FROM dds.order_v
    ) USING order_id
    WHERE built_snapshot_date < snapshot_date
)
GROUP BY d
ORDER BY d;
