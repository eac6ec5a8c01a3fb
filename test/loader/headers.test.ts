// Kafka headers without any service: kafkajs's header values (Buffer, string, repeated, none)
// normalised to one Buffer per name; the world's routers adding each header their landing declares
// as a string field named by its column, leaving out absent headers, values that are not UTF-8
// (counted) and headers declared onto the router's own fields; and the routes read from the options
// in force, so a swap moves the next message (with the same target object while the table stays).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IHeaders } from "kafkajs";
import { compileLoaderConfig, type LoaderConfigInput } from "../../src/config/loader.ts";
import { normaliseHeaders } from "../../src/loader/headers.ts";
import { hitsRouter, OptionsInForce, ordersRouter } from "../../src/loader/routes.ts";
import type { SpliceRoute, SpliceRouter } from "../../src/loader/splice.ts";
import type { LoaderMessage, LoaderTarget } from "../../src/loader/types.ts";

const NOT_UTF8 = Buffer.from([0x61, 0xff, 0xfe]);

function message(partition: number, headers?: IHeaders): LoaderMessage {
  return { topic: "hits", partition, offset: 7n, key: null, value: Buffer.from("{}"), headers: normaliseHeaders(headers) };
}

function route(router: SpliceRouter, m: LoaderMessage): SpliceRoute {
  const r = router(m, "{}");
  assert.ok(r !== null, "the world's routers route every message");
  return r;
}

describe("normaliseHeaders", () => {
  test("one Buffer per name: strings as UTF-8, the last value of a repeated name, headers without a value left out", () => {
    assert.equal(normaliseHeaders(undefined), undefined);
    assert.equal(normaliseHeaders({}), undefined, "no header: no map");
    assert.equal(normaliseHeaders({ gone: undefined }), undefined);
    const raw = { a: Buffer.from("one"), b: "zwei ü", c: ["x", Buffer.from("y")], d: [Buffer.from("kept"), undefined], e: undefined, f: NOT_UTF8 } as IHeaders;
    // kafkajs decodes a header sent without a value as null, whatever its types say
    (raw as Record<string, unknown>).g = null;
    const headers = normaliseHeaders(raw);
    assert.ok(headers);
    assert.deepEqual([...headers.keys()], ["a", "b", "c", "d", "f"]);
    assert.equal(headers.get("a")?.toString(), "one");
    assert.deepEqual(headers.get("b"), Buffer.from("zwei ü", "utf8"));
    assert.equal(headers.get("c")?.toString(), "y", "the last of a repeated name");
    assert.equal(headers.get("d")?.toString(), "kept", "the last one with a value");
    assert.deepEqual(headers.get("f"), NOT_UTF8, "kept as sent, valid UTF-8 or not");
  });
});

describe("the world's routers and declared headers", () => {
  const declared: LoaderConfigInput = {
    tables: {
      "stg.hits_in": { headers: { "x-trace-id": "trace_id", "x-source": "source", "x-raw": "_raw" } },
      "stg.orders_raw_dist": { headers: { "x-trace-id": "order_trace" } },
    },
  };

  test("hits: each declared header present and UTF-8 becomes a string field named by its column; the rest add nothing", () => {
    const options = new OptionsInForce(compileLoaderConfig(declared));
    const skipped: string[] = [];
    const router = hitsRouter(["ch1", "ch2"], options.landing("hits"), { onHeaderSkipped: (target, header) => skipped.push(`${target.node}:${target.table} ${header}`) });

    const full = route(router, message(1, { "x-trace-id": "t-1", "x-source": Buffer.from("web"), "x-raw": "not me", other: "ignored" }));
    assert.deepEqual(full.target, { node: "ch2", table: "stg.hits_in" });
    assert.deepEqual(full.fields, { _raw: "{}", kafka_topic: "hits", kafka_partition: 1, kafka_offset: 7n, trace_id: "t-1", source: "web" }, "x-raw names _raw, the router's own: never promoted");

    const partial = route(router, message(0, { "x-source": NOT_UTF8 }));
    assert.deepEqual(partial.fields, { _raw: "{}", kafka_topic: "hits", kafka_partition: 0, kafka_offset: 7n }, "absent: no field; not UTF-8: no field");
    assert.deepEqual(skipped, ["ch1:stg.hits_in x-source"], "the value left out is counted");

    assert.deepEqual(route(router, message(0)).fields, { _raw: "{}", kafka_topic: "hits", kafka_partition: 0, kafka_offset: 7n }, "no headers at all");
    assert.deepEqual(options.clashes(), [{ table: "stg.hits_in", header: "x-raw", column: "_raw" }]);
  });

  test("orders: its own table's headers only", () => {
    const options = new OptionsInForce(compileLoaderConfig(declared));
    const r = route(ordersRouter("ch1", options.landing("orders")), { ...message(0, { "x-trace-id": "o-9", "x-source": "web" }), topic: "orders" });
    assert.deepEqual(r.target, { node: "ch1", table: "stg.orders_raw_dist" });
    assert.deepEqual(r.fields, { raw: "{}", kafka_topic: "orders", kafka_partition: 0, kafka_offset: 7n, _load_id: "", order_trace: "o-9" });
  });

  test("a fixed landing (a bench's table) promotes no header and keeps the old signatures", () => {
    const r = route(hitsRouter(["private"], "bench_x.hits"), message(3, { "x-trace-id": "t" }));
    assert.deepEqual(r.target, { node: "private", table: "bench_x.hits" });
    assert.deepEqual(Object.keys(r.fields), ["_raw", "kafka_topic", "kafka_partition", "kafka_offset"]);
    assert.deepEqual(route(ordersRouter("ch1"), message(0)).target, { node: "ch1", table: "stg.orders_raw_dist" });
    assert.throws(() => hitsRouter([]), /hitsRouter: the stand config lists no ClickHouse node/);
  });

  test("the routes are read at every message: a swap of the options moves the next one, buffered ones are not the router's", () => {
    const options = new OptionsInForce(compileLoaderConfig({}));
    const router = hitsRouter(["ch1", "ch2"], options.landing("hits"));
    const first = route(router, message(0)).target;
    assert.deepEqual(first, { node: "ch1", table: "stg.hits_in" });
    options.set(compileLoaderConfig({ flush: { maxRows: 5 } }));
    assert.equal(route(router, message(0)).target, first, "same table after a swap: the same target object");
    options.set(compileLoaderConfig({ routes: { hits: "stg.hits_b" }, tables: { "stg.hits_b": { headers: { h: "h_col" } } } }));
    const moved = route(router, message(0, { h: "v" }));
    assert.deepEqual(moved.target, { node: "ch1", table: "stg.hits_b" } satisfies LoaderTarget);
    assert.equal(moved.fields.h_col, "v", "the new table's declared headers");
    assert.deepEqual(route(router, message(1)).target, { node: "ch2", table: "stg.hits_b" });
  });
});
