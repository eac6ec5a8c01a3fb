-- The days dm_transform must (re)build for its per-day marts (daily_funnel, daily_revenue),
-- derived from the two ledgers. One row per day: d (Date), reasons (Array(String)). Account: etl.
--
--   dm_behind_dds    the day's newest dds commit (any dds target) is newer than the older of its
--                    two per-day mart commits, or a mart has never committed the day (version 0).
-- Versions grow across both ledgers (tasks/etl.ts takes the next one above both), so "newer" is
-- exact, and a dm run that failed after one mart still leaves its day behind. The whole-history
-- marts (daily_traffic, daily_dq_errors) are rebuilt on every run and need no days.

SELECT d, ['dm_behind_dds'] AS reasons
FROM
(
    SELECT data_date AS d, max(_version) AS dds_version
    FROM dds.load_ledger_dist
    GROUP BY d
)
ANY LEFT JOIN
(
    SELECT
        data_date AS d,
        least(maxIf(_version, target = 'daily_funnel'), maxIf(_version, target = 'daily_revenue')) AS dm_version
    FROM dm.load_ledger_dist
    GROUP BY d
) USING d
WHERE dm_version < dds_version
ORDER BY d;
