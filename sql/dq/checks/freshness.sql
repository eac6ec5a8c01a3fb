-- freshness: ODS's newest event date is the last day the position says was played (position - 1
-- days after the start date). One row, on that expected day; it fails when ODS is behind or ahead.
SELECT
    {{dq.last_played_day}} AS data_date,
    toUInt64(1) AS reference_rows,
    toUInt64(ods_days > 0) AS actual_rows,
    toUInt64(newest != {{dq.last_played_day}}) AS failed_rows,
    if(newest = {{dq.last_played_day}}, emptyArrayString(),
       [concat('ODS newest date ', if(ods_days = 0, 'none (ODS is empty)', toString(newest)), ', but ', {{dq.position_text}}, ' says the last played day is ', toString({{dq.last_played_day}}))]) AS offending_keys
FROM
(
    SELECT max(EventDate) AS newest, uniqExact(EventDate) AS ods_days
    FROM ods.event_dist
)
