-- check-clickhouse: the distributed DDL queue in ZooKeeper, one row per entry with the number of
-- hosts it was sent to (parsed from the entry's "hosts: ['h:p', …]" line). Each entry is then
-- read on its own by ddl-queue-entry.sql: 18.16's system.zookeeper takes only `path = constant`.
-- Account: reader.
SELECT
    name,
    length(extractAll(extract(value, 'hosts: \\[([^\\]]*)\\]'), '\'[^\']+\'')) AS hosts
FROM system.zookeeper
WHERE path = {{ddl_queue_path}}
ORDER BY name;
