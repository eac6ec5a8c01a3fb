-- check-clickhouse: the Distributed table ods.event_dist, read from this node, returns the rows
-- of every shard: run on every node, its count must equal the sum of the nodes' local counts, and
-- every local count must be above zero. Account: reader.
SELECT
    (SELECT count() FROM ods.event_dist) AS through_distributed,
    (SELECT count() FROM ods.event) AS local_rows;
