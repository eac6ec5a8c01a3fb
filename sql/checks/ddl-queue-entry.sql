-- check-clickhouse: how many hosts finished one DDL queue entry (children of its `finished` node).
-- Account: reader.
SELECT toUInt64(sum(numChildren)) AS finished
FROM system.zookeeper
WHERE path = {{entry_path}} AND name = 'finished';
