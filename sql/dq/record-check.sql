-- One check's rows for this dq run, written unpublished: dm.dq_summary_v shows them once
-- publish.sql commits the run's days. A repeated try of the same run writes the same key
-- (data_date, check_name, run) with a newer _version, and the table keeps the newest.
INSERT INTO dm.dq_summary_dist
(
    data_date, check_name, reference_rows, actual_rows, failed_rows, status, offending_keys,
    _version, _load_id, _load_ts
)
SELECT
    data_date,
    {{dq.check_name}},
    toUInt64(reference_rows),
    toUInt64(actual_rows),
    toUInt64(failed_rows),
    if(failed_rows = 0, 'pass', 'fail'),
    arraySlice(offending_keys, 1, 20),
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM {{dq.check_rows}};
