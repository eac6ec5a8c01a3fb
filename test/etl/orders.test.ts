// orders_ingest on the real stand: the parse verdicts, snapshot versioning (the later snapshot
// wins, whatever order they arrive in), reruns of the same load, and the pull from the orders
// topic through the Kafka reader. Holds the world lock: it recreates the world databases and
// reads the shared `orders` topic with the world's consumer group.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import type { StandClickHouse } from "../../src/clickhouse/client.ts";
import { kafkaBroker } from "../../src/config/stand.ts";
import { ORDERS_TOPIC } from "../../src/world/constants.ts";
import { parseOrdersBatch, pullOrdersBatch } from "../../tasks/orders.ts";
import { createTopics } from "../../tasks/topics.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { adminSession, insertDistributed, quietIo, rebuildWorldWithoutIngest, standConfig } from "../../testkit/world/etl-world.ts";

let lock: WorldLock;
let admin: StandClickHouse;
const io = quietIo();

before(async () => {
  lock = await takeWorldLock();
  await rebuildWorldWithoutIngest();
  admin = adminSession();
});

after(async () => {
  await admin?.close();
  await lock?.release();
});

function orderDoc(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    order_id: "20260601-0001",
    user_id: 123456789,
    status: "created",
    created_at: "2026-06-01T06:00:00.123Z",
    updated_at: "2026-06-01T06:00:00.123Z",
    items_total: "2980.00",
    discount: "0.00",
    delivery: "199.00",
    total: "3179.00",
    items: [{ sku: "HOME-001", qty: 2, price: "1490.00" }],
    snapshot_date: "2026-06-01",
    ...overrides,
  };
}

/** Documents claimed under a load without going through Kafka: a topic of their own, so their
 * (partition, offset) never stands for a real message of `orders` (a pull skips claimed offsets, and
 * on a fresh topic the real offsets start at 0 too). */
async function land(loadId: string, docs: readonly string[]): Promise<void> {
  await insertDistributed(admin, "stg.orders_raw_dist", docs.map((raw) => ({ raw, kafka_topic: "orders-fixture", _load_id: loadId, _load_ts: "2026-06-02 00:00:00" })));
}

async function currentOrders(): Promise<Record<string, unknown>[]> {
  return admin.query("SELECT * FROM ods.order_v ORDER BY order_id");
}

test("valid documents land in ods.order, every invalid one in ods.order_errors with its reason", async () => {
  const valid = JSON.stringify(orderDoc());
  const invalid: Record<string, string> = {
    "[1,2]": "not_an_object",
    "not json at all": "not_an_object",
    [JSON.stringify({ ...orderDoc({ order_id: "x-extra" }), extra: 1 })]: "keyset_mismatch",
    [JSON.stringify({ order_id: "x-missing", status: "paid" })]: "keyset_mismatch",
    [JSON.stringify(orderDoc({ order_id: "x-user" })).replace("123456789", "18446744073709551616")]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-neg", user_id: -5 }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-status", status: "shipped" }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-time", created_at: "2026-02-31T10:00:00.000Z" }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-money", total: "12.3" }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-numeric-money", total: 3179 }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-items", items: [{ sku: "X", qty: "2", price: "1.00" }] }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-items-kind", items: { sku: "X" } }))]: "field_invalid",
    [JSON.stringify(orderDoc({ order_id: "x-date", snapshot_date: "2026-13-01" }))]: "field_invalid",
  };
  await land("parse-1", [valid, ...Object.keys(invalid)]);
  const report = await parseOrdersBatch({ ...io, loadId: "parse-1" });
  assert.equal(report.landed, 1 + Object.keys(invalid).length);
  assert.equal(report.orders, 1);
  assert.deepEqual(report.errors, { field_invalid: 9, keyset_mismatch: 2, not_an_object: 2 });

  const errors = await admin.query<{ raw: string; error_class: string }>("SELECT raw, toString(error_class) AS error_class FROM ods.order_errors_dist WHERE _load_id = 'parse-1'");
  assert.deepEqual(Object.fromEntries(errors.map((e) => [e.raw, e.error_class])), invalid);

  const [order] = await currentOrders();
  assert.deepEqual(
    { ...order, _load_ts: undefined },
    {
      order_id: "20260601-0001", user_id: "123456789", status: "created",
      created_at: "2026-06-01 06:00:00", updated_at: "2026-06-01 06:00:00", // whole seconds on 18.16
      items_total: 2980, discount: 0, delivery: 199, total: 3179,
      items: '[{"sku":"HOME-001","qty":2,"price":"1490.00"}]', snapshot_date: "2026-06-01", _load_id: "parse-1", _load_ts: undefined,
    },
  );
});

test("a later snapshot supersedes an earlier one, also when the earlier one arrives last", async () => {
  await land("snap-2", [JSON.stringify(orderDoc({ status: "paid", updated_at: "2026-06-01T09:00:00.000Z", snapshot_date: "2026-06-02" }))]);
  await parseOrdersBatch({ ...io, loadId: "snap-2" });
  const afterSecond = await currentOrders();
  assert.deepEqual(afterSecond.map((o) => [o.order_id, o.status, o.snapshot_date, o._load_id]), [["20260601-0001", "paid", "2026-06-02", "snap-2"]]);

  await land("snap-1-again", [JSON.stringify(orderDoc())]);
  await parseOrdersBatch({ ...io, loadId: "snap-1-again" });
  assert.deepEqual(await currentOrders(), afterSecond, "snapshot 1 re-sent after snapshot 2 does not win");
});

test("rerunning the parse of the same load leaves ods.order_v and the errors unchanged", async () => {
  const orders = await currentOrders();
  const errors = await admin.query("SELECT count() AS n FROM ods.order_errors_dist");
  for (const loadId of ["parse-1", "snap-2", "snap-1-again"]) await parseOrdersBatch({ ...io, loadId });
  assert.deepEqual(await currentOrders(), orders);
  assert.deepEqual(await admin.query("SELECT count() AS n FROM ods.order_errors_dist"), errors);
  const stored = await admin.query<{ n: string }>("SELECT count() AS n FROM ods.order_dist");
  assert.equal(stored[0]?.n, "2", "each (order, snapshot) stored once: nothing re-inserted");
});

test("pull takes new order documents from the orders topic under its load id, and takes them once", async () => {
  const kafka = new Kafka({ brokers: [kafkaBroker(standConfig)], clientId: "etl-orders-test", logLevel: logLevel.NOTHING });
  const kafkaAdmin = kafka.admin();
  const producer = kafka.producer();
  await kafkaAdmin.connect();
  await producer.connect();
  try {
    // the world's topics, as world_initialize makes them: the loader reads hits and orders, so a
    // stand where no world was built yet (this file first on a fresh test stand) needs both
    await createTopics({ ...io, config: standConfig });
    const tag = randomBytes(4).toString("hex");
    const ids = [1, 2, 3].map((n) => `T${tag}-000${n}`);
    await producer.send({ topic: ORDERS_TOPIC.name, messages: ids.map((id) => ({ key: id, value: JSON.stringify(orderDoc({ order_id: id })) })) });

    // One pull is one read of what the reader has; the first read of a fresh reader may end before
    // the broker hands over everything, so pull again (same load id) until the documents are in.
    const loadId = `pull-${tag}`;
    const landedIds = async (): Promise<string[]> =>
      (await admin.query<{ id: string }>(`SELECT visitParamExtractString(raw, 'order_id') AS id FROM stg.orders_raw_dist WHERE _load_id = '${loadId}' AND raw LIKE '%T${tag}-%' ORDER BY id`)).map((r) => r.id);
    for (let attempt = 0; attempt < 5 && (await landedIds()).length < ids.length; attempt++) await pullOrdersBatch({ ...io, loadId });
    assert.deepEqual(await landedIds(), ids);

    await parseOrdersBatch({ ...io, loadId });
    const parsed = await admin.query<{ order_id: string }>(`SELECT order_id FROM ods.order_v WHERE order_id LIKE 'T${tag}-%' ORDER BY order_id`);
    assert.deepEqual(parsed.map((r) => r.order_id), ids);

    const again = await pullOrdersBatch({ ...io, loadId: `${loadId}-again` });
    const repeated = await admin.query(`SELECT raw FROM stg.orders_raw_dist WHERE _load_id = '${loadId}-again' AND raw LIKE '%T${tag}-%'`);
    assert.equal(repeated.length, 0, `committed offsets: the second pull (${again.landed} rows) does not take them again`);
  } finally {
    await producer.disconnect();
    await kafkaAdmin.disconnect();
  }
});
