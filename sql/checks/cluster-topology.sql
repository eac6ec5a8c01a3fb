-- check-clickhouse: the cluster as this node sees it (run on every node; all must agree with
-- stand.yaml). One row per shard replica. Account: reader.
SELECT toUInt32(shard_num) AS shard, toUInt32(replica_num) AS replica, host_address AS host, toUInt32(port) AS port
FROM system.clusters
WHERE cluster = {{cluster_name}}
ORDER BY shard, replica;
