-- The commit of one transform target for the run's days: a row in the layer's ledger for every run
-- day, with the rows this run wrote for it (0 when it wrote none), so the target's view shows this
-- version from now on. Not a file of its own: a transform file ends with the placeholder
-- ledger.commit(target, day_column), and tasks/etl.ts pastes this statement there, with ledger.layer
-- the file's folder (dds, dm), ledger.target the table and the value written as its target, and
-- ledger.day_column the column that holds a row's day.
INSERT INTO {{ledger.layer}}.load_ledger_dist (target, data_date, row_count, _version, _load_id, _started_at, _load_ts)
SELECT '{{ledger.target}}', data_date, row_count, {{run.version}}, {{run.load_id}}, {{run.started_at}}, {{platform.instant_now}}
FROM (SELECT arrayJoin({{run.date_array}}) AS data_date)
ANY LEFT JOIN
(
    SELECT {{ledger.day_column}} AS data_date, count() AS row_count
    FROM {{ledger.layer}}.{{ledger.target}}_dist
    WHERE _version = {{run.version}}
    GROUP BY data_date
) USING data_date
