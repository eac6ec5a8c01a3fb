-- check-clickhouse: this node's macros, which the replicated DDL expands ({cluster}, {shard},
-- {replica}). Run on every node. Account: reader.
SELECT macro, substitution
FROM system.macros
ORDER BY macro;
