-- One check's published results of this dq run, day by day (what its check task asserts on).
SELECT
    toString(data_date) AS data_date,
    toString(reference_rows) AS reference_rows,
    toString(actual_rows) AS actual_rows,
    toString(failed_rows) AS failed_rows,
    status,
    offending_keys
FROM dm.dq_summary_v
WHERE check_name = {{dq.check_name}} AND run_id = {{run.load_id}}
ORDER BY data_date
