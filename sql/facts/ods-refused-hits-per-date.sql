-- The one count of the world's refused hits in ODS per counter day and error_class, each distinct
-- hit once: ods.event_errors' sorting key is error_class and the hit's own fields (the fingerprint
-- dm.daily_dq_errors counts by), so FINAL collapses a replayed day's copies. EventDate is the text
-- the hit carried (a refused hit may have no readable date). Read through src/world/ods-facts.ts.
SELECT EventDate AS d, toString(error_class) AS error_class, count() AS n
FROM ods.event_errors_dist FINAL
GROUP BY d, error_class
ORDER BY d, error_class;
