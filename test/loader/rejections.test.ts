// Rejection classes by server code, the sink gate's backoff, and the loader config's defaults.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Gauge, Registry } from "prom-client";
import { CH_ERROR, REFUSAL_CODES } from "../../src/clickhouse/errors.ts";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { classifyRejection } from "../../src/loader/rejections.ts";
import { SinkGate } from "../../src/loader/sink-gate.ts";
import { seededRandom, serverError } from "../../testkit/loader-support.ts";

describe("classifyRejection", () => {
  test("by server code: transient, data, schema, unknown", () => {
    const cases: [number, string, string][] = [
      [242, "transient", "transient_242"], // TABLE_IS_READ_ONLY
      [225, "transient", "transient_225"], // NO_ZOOKEEPER
      [252, "transient", "transient_252"], // TOO_MANY_PARTS
      [241, "transient", "transient_241"], // MEMORY_LIMIT_EXCEEDED
      [159, "transient", "transient_159"], // TIMEOUT_EXCEEDED
      [27, "data", "cannot_parse_input_assertion_failed"],
      [72, "data", "cannot_parse_number"],
      [26, "data", "cannot_parse_quoted_string"],
      [117, "data", "incorrect_data"],
      [38, "data", "cannot_parse_date"],
      [60, "schema", "schema_60"], // UNKNOWN_TABLE
      [16, "schema", "schema_16"], // NO_SUCH_COLUMN_IN_TABLE
      [81, "schema", "schema_81"], // UNKNOWN_DATABASE
      [4242, "unknown", "unknown_4242"],
    ];
    for (const [code, kind, reason] of cases) {
      const rejection = classifyRejection(serverError(code));
      assert.deepEqual([rejection.kind, rejection.code, rejection.reason], [kind, code, reason], `code ${code}`);
    }
  });

  test("every server code 0–1100 keeps the class the loader gave it before the refusal codes were shared", () => {
    const expected: Record<string, number[]> = {
      transient: [3, 159, 173, 202, 209, 210, 225, 236, 241, 242, 252, 319, 379, 394, 999],
      data: [6, 25, 26, 27, 32, 33, 38, 41, 53, 69, 70, 72, 117, 130, 131, 190, 349, 377, 470],
      schema: [8, 16, 47, 60, 62, 73, 81, 115, 164, 192, 193, 194, 291, 392, 497, 516],
    };
    const actual: Record<string, number[]> = { transient: [], data: [], schema: [] };
    for (let code = 0; code <= 1100; code++) {
      const { kind } = classifyRejection(serverError(code));
      if (kind !== "unknown") actual[kind]?.push(code);
    }
    assert.deepEqual(actual, expected, "every other code is unknown");
    assert.equal(classifyRejection(serverError(CH_ERROR.IP_ADDRESS_NOT_ALLOWED)).kind, "unknown");
    for (const code of REFUSAL_CODES) {
      if (code !== CH_ERROR.IP_ADDRESS_NOT_ALLOWED) assert.equal(classifyRejection(serverError(code)).kind, "schema", `refusal code ${code}`);
    }
  });

  test("the message text never decides: a data code with alarming words stays data", () => {
    const err = Object.assign(new Error("Code: 27, e.displayText() = DB::Exception: Table is in readonly mode ZooKeeper timeout"), { code: "27" });
    assert.equal(classifyRejection(err).kind, "data");
  });

  test("a socket error without a server code is transient; anything else unknown", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    assert.deepEqual([classifyRejection(refused).kind, classifyRejection(refused).reason], ["transient", "econnrefused"]);
    assert.equal(classifyRejection(new Error("Timeout error.")).kind, "unknown");
  });

  test("error text is capped", () => {
    const rejection = classifyRejection(Object.assign(new Error(`Code: 27, ${"x".repeat(10_000)}`), { code: "27" }), 100);
    assert.ok(Buffer.byteLength(rejection.text) <= 104);
  });
});

describe("SinkGate", () => {
  test("opens on an all-transient cycle, backs off with jitter up to the cap, closes on success", () => {
    const registry = new Registry();
    const gauge = new Gauge({ name: "sink_down", help: "h", registers: [registry] });
    const gate = new SinkGate({ initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0.5 }, gauge, seededRandom(1));
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const state = gate.record({ succeeded: 0, failedTransient: 2, failedOther: 0 }, now);
      assert.equal(state.down, true);
      assert.equal(gate.mayRun(now), false);
      delays.push(state.lastDelayMs);
      now = state.retryAt;
      assert.equal(gate.mayRun(now), true);
    }
    const bases = [100, 200, 400, 800, 1000, 1000];
    delays.forEach((d, i) => assert.ok(d >= (bases[i] ?? 0) / 2 && d <= (bases[i] ?? 0), `delay ${i}: ${d}`));
    const closed = gate.record({ succeeded: 1, failedTransient: 1, failedOther: 0 }, now);
    assert.deepEqual([closed.down, closed.retryAt], [false, 0]);
  });

  test("a cycle that failed for schema reasons backs off but does not report the sink down", () => {
    const gate = new SinkGate({ initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0 }, undefined);
    const state = gate.record({ succeeded: 0, failedTransient: 1, failedOther: 1 }, 0);
    assert.deepEqual([state.down, state.retryAt], [false, 100]);
    assert.equal(gate.record({ succeeded: 0, failedTransient: 0, failedOther: 0 }, 5).retryAt, 100, "a cycle that tried nothing changes nothing");
  });
});

describe("compileLoaderConfig", () => {
  test("defaults, frozen; unknown or bad fields refused", () => {
    const config = compileLoaderConfig();
    assert.equal(config.flush.maxRows, 20_000);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.flush));
    assert.throws(() => compileLoaderConfig({ flush: { maxRows: 0 } }));
    assert.throws(() => compileLoaderConfig({ backoff: { initialMs: 500, maxMs: 100 } }));
    assert.throws(() => compileLoaderConfig({ unknown: 1 } as never));
  });
});
