-- sessions_vs_reference: per cookie and day, the generator's visits (distinct VisitID of the valid
-- hits in ODS, the reference the generator leaves in every hit) against the sessions dds built
-- (dds.session_v). Key: (client_id, day); it fails when a side lacks it or the counts differ.
SELECT
    data_date,
    countIf(in_ods = 1) AS reference_rows,
    countIf(in_dds = 1) AS actual_rows,
    countIf(visits != sessions) AS failed_rows,
    arraySlice(arraySort(groupArrayIf(
        concat('client ', toString(client_id), ' on ', toString(data_date), ': ', toString(visits), ' visits in ODS, ', toString(sessions), ' sessions in DDS'),
        visits != sessions)), 1, 20) AS offending_keys
FROM
(
    SELECT ClientID AS client_id, EventDate AS data_date, toUInt8(1) AS in_ods, uniqExact(VisitID) AS visits
    FROM ods.event_dist FINAL
    GROUP BY client_id, data_date
)
ALL FULL OUTER JOIN
(
    SELECT client_id, session_date AS data_date, toUInt8(1) AS in_dds, toUInt64(count()) AS sessions
    FROM dds.session_v
    GROUP BY client_id, data_date
) USING (client_id, data_date)
GROUP BY data_date
