-- dds.identity for the run's days: the (client_id, user_id) pairs behind each day's purchase hits,
-- then the commit row of each day. Runs after 10-order.sql, whose orders it matches.
-- Scope: the run's days (counter days of the purchases). Account: etl.
--
-- A purchase hit names its order in purchaseID[1]; the order's backend record (dds.order_v, any
-- status: a cancelled order still proves who placed it) carries user_id. The hits are read on the
-- shards (ods.event_dist FINAL, sharded by client) and the orders come sharded by order_id, so
-- the JOIN must not run per shard: both sides are subqueries, which 18.16 evaluates on the
-- initiator, and the result is routed by client_id on insert. A purchase whose order has not
-- reached ODS yet gives no pair; its day is rebuilt when the order arrives (the order's Samara
-- day is the purchase's day; see sql/etl/00-dds-dates-to-process.sql, reason order_changed).

INSERT INTO dds.identity_dist (match_date, client_id, user_id, purchases, _version, _load_id, _load_ts)
SELECT
    match_date,
    client_id,
    user_id,
    toUInt32(count()) AS purchases,
    {{run.version}},
    {{run.load_id}},
    {{platform.instant_now}}
FROM
(
    SELECT EventDate AS match_date, ClientID AS client_id, purchaseID[1] AS order_id
    FROM ods.event_dist FINAL
    WHERE EventDate IN {{run.date_set}} AND EventType = 'purchase' AND notEmpty(purchaseID)
)
ANY INNER JOIN
(
    SELECT order_id, user_id FROM dds.order_v
) USING order_id
GROUP BY match_date, client_id, user_id;

{{ledger.commit(identity, match_date)}};
