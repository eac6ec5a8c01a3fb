-- Publishes this dq run's results: one commit row per day in dm.load_ledger (target 'dq_summary')
-- for every day the run wrote results for, and for every day published before (with row_count 0
-- when the run has nothing for it), so a day no check covers any more stops showing old results.
-- dm.dq_summary_v follows each day's newest commit, so a day switches to this run's rows at once.
INSERT INTO dm.load_ledger_dist (target, data_date, row_count, _version, _load_id, _started_at, _load_ts)
SELECT 'dq_summary', data_date, row_count, {{run.version}}, {{run.load_id}}, {{run.started_at}}, {{platform.instant_now}}
FROM
(
    SELECT data_date
    FROM
    (
        SELECT data_date FROM dm.dq_summary_dist WHERE _load_id = {{run.load_id}}
        UNION ALL
        SELECT data_date FROM dm.load_ledger_dist WHERE target = 'dq_summary'
    )
    GROUP BY data_date
)
ANY LEFT JOIN
(
    SELECT data_date, uniqExact(check_name) AS row_count
    FROM dm.dq_summary_dist
    WHERE _load_id = {{run.load_id}}
    GROUP BY data_date
) USING data_date;
