-- mart_daily_dq_errors: dm.daily_dq_errors_v against the refused hits counted again from
-- ods.event_errors_v (merged), on the same day rule (the hit's EventDate when it is a real
-- YYYY-MM-DD date, else its load day). Key: (day, error_class).
SELECT
    report_date AS data_date,
    countIf(in_ods = 1) AS reference_rows,
    countIf(in_mart = 1) AS actual_rows,
    countIf(in_ods = 0 OR in_mart = 0 OR d_rows != error_rows) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat(toString(report_date), ' ', error_class, ': ODS ', toString(d_rows), ' refused hits, mart ', toString(error_rows)),
        in_ods = 0 OR in_mart = 0 OR d_rows != error_rows)), 1, 20) AS offending_keys
FROM
(
    SELECT
        if(toString(toDateOrZero(EventDate)) = EventDate, toDateOrZero(EventDate), toDate(_load_ts)) AS report_date,
        toString(error_class) AS error_class,
        toUInt8(1) AS in_ods,
        toUInt64(count()) AS d_rows
    FROM ods.event_errors_v
    GROUP BY report_date, error_class
)
ALL FULL OUTER JOIN
(
    SELECT report_date, error_class, toUInt8(1) AS in_mart, error_rows
    FROM dm.daily_dq_errors_v
) USING (report_date, error_class)
GROUP BY report_date
