-- The one count of the world's valid hits in ODS per counter day, each hit once: ods.event is a
-- ReplacingMergeTree whose sorting key ends in WatchID and is sharded by ClientID, so a replayed
-- hit's copies share a shard and FINAL collapses them before merges catch up. Every reader of this
-- fact (check-clickhouse, the World page, wait_for_ods, the step DAGs' wait) runs this file through
-- src/world/ods-facts.ts. The filter is a date list or 1 (every day).
SELECT toString(EventDate) AS d, count() AS n
FROM ods.event_dist FINAL
WHERE {{date_filter}}
GROUP BY d
ORDER BY d;
