-- check-clickhouse: one query fans out to every shard: each answers with its own replica macro.
-- Account: lifecycle — the cluster() table function is refused in readonly mode (reader), and this
-- is cluster introspection, lifecycle's job.
SELECT arraySort(groupArray(substitution)) AS replicas
FROM cluster({{cluster_name}}, system.macros)
WHERE macro = 'replica';
