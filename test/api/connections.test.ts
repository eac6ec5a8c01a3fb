// Airflow's connections: the stand's own services listed read-only beside the stored ones, CRUD
// with masked passwords and extra secrets ("***" sent back keeps them), several order_by keys and
// the patterns, bulk actions with fail/skip/overwrite, the event log's masks, and connection tests:
// 403 while disabled (the default), and when enabled a real round trip to the test stand's
// Postgres and a refused one to a closed port.
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { loadStandConfig } from "../../src/config/index.ts";
import type { ProblemBody } from "../../src/api/index.ts";
import { auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { validatedAnswers } from "../../testkit/runner/airflow-contract.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

interface Connection {
  connection_id: string;
  conn_type: string;
  description: string | null;
  host: string | null;
  login: string | null;
  schema: string | null;
  port: number | null;
  password: string | null;
  extra: string | null;
  read_only: boolean;
}
type Page = { connections: Connection[]; total_entries: number };
type Bulk = Record<"create" | "update" | "delete", { success: string[]; errors: { error: string; status_code: number }[] } | undefined>;

const STAND_IDS = ["stand_postgres", "stand_runner_db", "stand_clickhouse_ch1", "stand_clickhouse_ch2", "stand_kafka", "stand_zookeeper"];

/** A port nothing listens on: one the kernel just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

void describe("connections", () => {
  let api: ApiHarness;
  let testing: ApiHarness;
  const engine = useTestRunner([], {
    beforeStop: async () => {
      await api?.close();
      await testing?.close();
    },
  });
  const send = <T = ProblemBody>(method: string, path: string, body?: unknown, harness?: ApiHarness) =>
    call<T>((harness ?? api).baseUrl, method, path, { headers: auth, body });
  const list = async (query: string) => {
    const res = await call<Page>(api.baseUrl, "GET", `/api/v2/connections${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const stored = (id: string) => engine.runner.getConnection(id);

  before(async () => {
    api = await startApi(engine.runner);
    testing = await startApi(engine.runner, new Registry(), { testConnection: "enabled" });
  });

  void it("lists the stand's own services read-only, first, with their passwords masked", async () => {
    const page = await list("");
    assert.deepEqual(page.connections.map((c) => c.connection_id), STAND_IDS);
    assert.ok(page.connections.every((c) => c.read_only));
    const pg = loadStandConfig().postgres;
    const postgres = page.connections[0];
    assert.deepEqual(
      [postgres?.conn_type, postgres?.host, postgres?.port, postgres?.login, postgres?.schema, postgres?.password],
      ["postgres", "127.0.0.1", pg.port, pg.user, pg.database, "***"],
    );
    const ch1 = await call<Connection>(api.baseUrl, "GET", "/api/v2/connections/stand_clickhouse_ch1");
    assert.equal(ch1.status, 200, ch1.text);
    assert.equal(ch1.body.port, loadStandConfig().clickhouse.nodes[0]?.http_port);
    assert.equal(ch1.body.password, "***");
    assert.doesNotMatch(ch1.text, new RegExp(loadStandConfig().clickhouse.accounts.admin.password));
    const kafka = JSON.parse((await call<Connection>(api.baseUrl, "GET", "/api/v2/connections/stand_kafka")).body.extra ?? "{}") as Record<string, unknown>;
    assert.equal(kafka["bootstrap.servers"], `127.0.0.1:${loadStandConfig().kafka.port}`);
    assert.equal((await send("POST", "/api/v2/connections/defaults")).status, 204);
    assert.equal((await list("")).total_entries, STAND_IDS.length, "create_default_connections adds nothing: the stand's are the defaults");
  });

  void it("creates and reads a connection, masking the password and secret-looking extra keys; a taken id is 409", async () => {
    const extra = JSON.stringify({ sslmode: "require", api_key: "k-123", nested: { token: "t-456", plain: 1 } });
    const created = await send<Connection>("POST", "/api/v2/connections", {
      connection_id: "warehouse", conn_type: "postgres", description: "the warehouse", host: "db.example", port: 5432, login: "etl", password: "s3cret", schema: "dw", extra,
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.password, "***");
    assert.deepEqual(JSON.parse(created.body.extra ?? ""), { sslmode: "require", api_key: "***", nested: { token: "***", plain: 1 } });
    assert.equal(created.body.read_only, false);
    const read = await call<Connection>(api.baseUrl, "GET", "/api/v2/connections/warehouse");
    assert.deepEqual(read.body, created.body);
    assert.doesNotMatch(read.text, /s3cret|k-123|t-456/);
    assert.equal((await stored("warehouse")).password, "s3cret", "stored as given");

    const again = await send("POST", "/api/v2/connections", { connection_id: "warehouse", conn_type: "http" });
    assert.equal(again.status, 409);
    assert.equal(again.body.field, "connection_id");
    const standId = await send("POST", "/api/v2/connections", { connection_id: "stand_kafka", conn_type: "kafka" });
    assert.equal(standId.status, 409);
    assert.match(problemText(standId.body), /stand/);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/nothing_here")).status, 404);
  });

  void it("patches with update_mask; a password or extra value of *** keeps the stored one", async () => {
    const masked = await send<Connection>("PATCH", "/api/v2/connections/warehouse?update_mask=description", { connection_id: "warehouse", conn_type: "ftp", host: "ignored", description: "changed" });
    assert.equal(masked.status, 200, masked.text);
    assert.deepEqual([masked.body.description, masked.body.conn_type, masked.body.host], ["changed", "postgres", "db.example"]);

    const read = (await call<Connection>(api.baseUrl, "GET", "/api/v2/connections/warehouse")).body;
    const extra = { ...(JSON.parse(read.extra ?? "{}") as Record<string, unknown>), sslmode: "verify-full", motto: "***" };
    const sentBack = await send("PATCH", "/api/v2/connections/warehouse", { ...read, read_only: undefined, team_name: null, host: "db2.example", extra: JSON.stringify(extra) });
    assert.equal(sentBack.status, 200, sentBack.text);
    const after = await stored("warehouse");
    assert.equal(after.password, "s3cret", "*** kept the password");
    assert.deepEqual(JSON.parse(after.extra ?? ""), { sslmode: "verify-full", api_key: "k-123", nested: { token: "t-456", plain: 1 }, motto: "***" }, "only what reads masked is taken back");
    assert.equal(after.host, "db2.example");

    const newPassword = await send("PATCH", "/api/v2/connections/warehouse?update_mask=password", { connection_id: "warehouse", conn_type: "postgres", password: "n3w" });
    assert.equal(newPassword.status, 200, newPassword.text);
    assert.equal((await stored("warehouse")).password, "n3w");
    assert.equal((await stored("warehouse")).host, "db2.example", "fields the mask leaves out stay");

    const mismatch = await send("PATCH", "/api/v2/connections/warehouse", { connection_id: "other", conn_type: "postgres" });
    assert.equal(mismatch.status, 400);
    assert.equal((await send("PATCH", "/api/v2/connections/nothing_here", { connection_id: "nothing_here", conn_type: "http" })).status, 404);
    const badMask = await send("PATCH", "/api/v2/connections/warehouse?update_mask=colour", { connection_id: "warehouse", conn_type: "postgres" });
    assert.equal(badMask.status, 422);
    assert.equal(badMask.body.field, "update_mask");
  });

  void it("refuses to change or delete the stand's own connections, naming them read-only", async () => {
    for (const [method, body] of [["PATCH", { connection_id: "stand_postgres", conn_type: "postgres", host: "elsewhere" }], ["DELETE", undefined]] as const) {
      const res = await send(method, "/api/v2/connections/stand_postgres", body);
      assert.equal(res.status, 409, `${method}: ${res.text}`);
      assert.match(problemText(res.body), /'stand_postgres' is read-only/);
    }
    assert.equal((await call<Connection>(api.baseUrl, "GET", "/api/v2/connections/stand_postgres")).body.host, "127.0.0.1");
  });

  void it("lists with several order_by keys, - for descending, the patterns and pages", async () => {
    for (const [id, type, port] of [["sort_a", "http", 80], ["sort_b", "http", 8080], ["sort_c", "ftp", 21], ["sort_d", "http", 443]] as const) {
      assert.equal((await send("POST", "/api/v2/connections", { connection_id: id, conn_type: type, host: "h.example", port })).status, 201);
    }
    const ids = (p: Page) => p.connections.map((c) => c.connection_id);
    assert.deepEqual(ids(await list("?connection_id_pattern=sort_&order_by=conn_type&order_by=-port")), ["sort_c", "sort_b", "sort_d", "sort_a"]);
    assert.deepEqual(ids(await list("?connection_id_pattern=SORT_&order_by=conn_type,-port")), ["sort_c", "sort_b", "sort_d", "sort_a"], "case-insensitive; comma separated keys");
    assert.deepEqual(ids(await list("?connection_id_pattern=sort_a|sort_c&order_by=-connection_id")), ["sort_c", "sort_a"]);
    assert.deepEqual(ids(await list("?connection_id_prefix_pattern=stand_clickhouse&order_by=-conn_id")), ["stand_clickhouse_ch2", "stand_clickhouse_ch1"]);
    const newest = await list("?order_by=-id&limit=2");
    assert.deepEqual(ids(newest), ["sort_d", "sort_c"]);
    assert.deepEqual(ids(await list("?order_by=team_name&order_by=-id&limit=2")), ["sort_d", "sort_c"], "every team_name is null: the next key decides");
    assert.equal(newest.total_entries, STAND_IDS.length + 5);
    const page = await list("?order_by=id&limit=2&offset=5");
    assert.deepEqual(ids(page), ["stand_zookeeper", "warehouse"]);
    const past = await list("?offset=100");
    assert.deepEqual([past.connections.length, past.total_entries], [0, STAND_IDS.length + 5]);
    const bad = await call(api.baseUrl, "GET", "/api/v2/connections?order_by=password");
    assert.equal(bad.status, 422);
    assert.equal(bad.body.field, "order_by");
  });

  void it("bulk: create (fail, skip, overwrite), update (fail, skip, update_mask), delete (fail, skip), the stand's refused", async () => {
    const bulk = (actions: unknown[]) => send<Bulk>("PATCH", "/api/v2/connections", { actions });
    const failed = await bulk([{ action: "create", entities: [{ connection_id: "bulk_new", conn_type: "http" }, { connection_id: "sort_a", conn_type: "http" }] }]);
    assert.equal(failed.status, 200, failed.text);
    assert.deepEqual(failed.body.create?.success, []);
    assert.equal(failed.body.create?.errors[0]?.status_code, 409);
    assert.match(failed.body.create?.errors[0]?.error ?? "", /'sort_a'/);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/bulk_new")).status, 404, "a failed action changes nothing");

    const skipped = await bulk([{ action: "create", action_on_existence: "skip", entities: [{ connection_id: "bulk_new", conn_type: "http", password: "p1" }, { connection_id: "sort_a", conn_type: "ssh" }] }]);
    assert.deepEqual(skipped.body.create, { success: ["bulk_new"], errors: [] });
    assert.equal((await stored("sort_a")).connType, "http");

    const overwritten = await bulk([{ action: "create", action_on_existence: "overwrite", entities: [{ connection_id: "bulk_new", conn_type: "ssh", password: "***" }] }]);
    assert.deepEqual(overwritten.body.create, { success: ["bulk_new"], errors: [] });
    assert.deepEqual([(await stored("bulk_new")).connType, (await stored("bulk_new")).password], ["ssh", "p1"]);
    const overStand = await bulk([{ action: "create", action_on_existence: "overwrite", entities: [{ connection_id: "stand_kafka", conn_type: "kafka" }] }]);
    assert.equal(overStand.body.create?.errors[0]?.status_code, 409);
    assert.match(overStand.body.create?.errors[0]?.error ?? "", /read-only/);

    const both = await bulk([
      { action: "update", entities: [{ connection_id: "sort_b", conn_type: "http", host: "x" }, { connection_id: "gone", conn_type: "http" }] },
      { action: "update", action_on_non_existence: "skip", update_mask: ["host"], entities: [{ connection_id: "sort_b", conn_type: "ftp", host: "new.example" }, { connection_id: "gone", conn_type: "http" }] },
    ]);
    assert.equal(both.body.update?.errors[0]?.status_code, 404);
    assert.match(both.body.update?.errors[0]?.error ?? "", /'gone'/);
    assert.deepEqual(both.body.update?.success, ["sort_b"]);
    assert.deepEqual([(await stored("sort_b")).host, (await stored("sort_b")).connType], ["new.example", "http"]);
    const standUpdate = await bulk([{ action: "update", entities: [{ connection_id: "stand_postgres", conn_type: "postgres" }] }]);
    assert.equal(standUpdate.body.update?.errors[0]?.status_code, 409);

    const deleted = await bulk([
      { action: "delete", entities: ["sort_c", "gone"] },
      { action: "delete", action_on_non_existence: "skip", entities: ["sort_c", { connection_id: "sort_d", conn_type: "http" }, "gone"] },
      { action: "delete", action_on_non_existence: "skip", entities: ["stand_zookeeper"] },
    ]);
    assert.deepEqual(deleted.body.delete?.success, ["sort_c", "sort_d"]);
    assert.deepEqual(deleted.body.delete?.errors.map((e) => e.status_code), [404, 409]);
    assert.deepEqual(deleted.body.create ?? null, null);
  });

  void it("deletes a stored connection", async () => {
    assert.equal((await send("DELETE", "/api/v2/connections/sort_a")).status, 204);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/sort_a")).status, 404);
    assert.equal((await send("DELETE", "/api/v2/connections/sort_a")).status, 404);
  });

  void it("the event log keeps each change with the password and extra secrets masked", async () => {
    const res = await call<{ event_logs: { event: string; extra: string | null }[] }>(api.baseUrl, "GET", "/api/v2/eventLogs?event_pattern=connection&limit=100");
    const events = res.body.event_logs.map((e) => e.event);
    for (const event of ["post_connection", "patch_connection", "bulk_connections", "delete_connection", "create_default_connections"]) assert.ok(events.includes(event), `${event} in ${events.join(",")}`);
    const text = JSON.stringify(res.body);
    assert.doesNotMatch(text, /s3cret|n3w|k-123|t-456|"p1"/);
    const post = res.body.event_logs.find((e) => e.event === "post_connection");
    assert.match(post?.extra ?? "", /"password":"\*\*\*"/);
    assert.match(post?.extra ?? "", /"api_key":"\*\*\*"/);
    assert.match(post?.extra ?? "", /"sslmode":"require"/);
  });

  void it("answers a bad body 422 naming the field, and survives hostile ones", async () => {
    const cases: [unknown, string][] = [
      [{ connection_id: "bad id!", conn_type: "http" }, "connection_id"],
      [{ connection_id: "test", conn_type: "http" }, "connection_id"],
      [{ connection_id: "ok_id" }, "conn_type"],
      [{ connection_id: "ok_id", conn_type: "http", port: "80" }, "port"],
      [{ connection_id: "ok_id", conn_type: "http", port: 70_000 }, "port"],
      [{ connection_id: "ok_id", conn_type: "http", extra: "not json" }, "extra"],
      [{ connection_id: "ok_id", conn_type: "http", extra: "[1,2]" }, "extra"],
      [{ connection_id: "ok_id", conn_type: "http", team_name: "blue" }, "team_name"],
      [{ connection_id: "ok_id", conn_type: "http", colour: "red" }, "colour"],
      [[1, 2, 3], "body"],
      [{ connection_id: { $gt: "" }, conn_type: "http" }, "connection_id"],
    ];
    for (const [body, field] of cases) {
      const res = await send("POST", "/api/v2/connections", body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.field, field, JSON.stringify(body));
    }
    const bulk = await send("PATCH", "/api/v2/connections", { actions: [{ action: "create", action_on_existence: "maybe", entities: [] }] });
    assert.equal(bulk.status, 422);
    assert.match(bulk.body.field ?? "", /^actions\.0/);
    const deep = await send("PATCH", "/api/v2/connections", { actions: [{ action: "explode" }] });
    assert.equal(deep.status, 422);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections?connection_id_pattern=%00")).status, 422);
    const oddPath = await call(api.baseUrl, "GET", "/api/v2/connections/a%00b");
    assert.equal(oddPath.status, 400);
    assert.equal(oddPath.body.field, "connection_id");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/monitor/health")).status, 200);
  });

  void it("test_connection and enqueue-test are 403 while disabled (the default)", async () => {
    for (const path of ["/api/v2/connections/test", "/api/v2/connections/enqueue-test"]) {
      const res = await send("POST", path, { connection_id: "stand_postgres", conn_type: "postgres" });
      assert.equal(res.status, 403, res.text);
      assert.match(problemText(res.body), /^Testing connections is disabled/);
    }
  });

  void it("when enabled, tests for real: the stand's Postgres answers, a closed port does not", async () => {
    const test = (body: unknown) => send<{ status: boolean; message: string }>("POST", "/api/v2/connections/test", body, testing);
    const stand = await test({ connection_id: "stand_runner_db", conn_type: "postgres" });
    assert.equal(stand.status, 200, stand.text);
    assert.equal(stand.body.status, true, stand.body.message);
    const pg = loadStandConfig().postgres;
    const given = await test({ connection_id: "probe_pg", conn_type: "postgres", host: "127.0.0.1", port: pg.port, login: pg.user, password: pg.password, schema: pg.database });
    assert.equal(given.body.status, true, given.body.message);
    const wrong = await test({ connection_id: "stand_postgres", conn_type: "postgres", password: "not-the-password" });
    assert.equal(wrong.body.status, false);
    assert.match(wrong.body.message, /28P01|password/);

    const port = await closedPort();
    for (const type of ["postgres", "clickhouse", "http"]) {
      const closed = await test({ connection_id: "nowhere", conn_type: type, host: "127.0.0.1", port, login: "x" });
      assert.equal(closed.status, 200, closed.text);
      assert.equal(closed.body.status, false, `${type}: ${closed.body.message}`);
      assert.match(closed.body.message, new RegExp(`127\\.0\\.0\\.1:${port}.*(ECONNREFUSED|refused|fetch failed)`), type);
    }
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/probe_pg")).status, 404, "a test stores nothing");
  });

  void it("enqueue-test runs at once and keeps the outcome under its token; commit_on_success saves", async () => {
    const pg = loadStandConfig().postgres;
    const queued = await send<{ token: string; connection_id: string; state: string }>("POST", "/api/v2/connections/enqueue-test", {
      connection_id: "saved_pg", conn_type: "postgres", host: "127.0.0.1", port: pg.port, login: pg.user, password: pg.password, schema: pg.database, commit_on_success: true,
    }, testing);
    assert.equal(queued.status, 202, queued.text);
    assert.deepEqual([queued.body.connection_id, queued.body.state], ["saved_pg", "success"]);
    const polled = await call<{ state: string; result_message: string | null; created_at: string }>(testing.baseUrl, "GET", "/api/v2/connections/enqueue-test", { headers: { "Airflow-Connection-Test-Token": queued.body.token } });
    assert.equal(polled.status, 200, polled.text);
    assert.equal(polled.body.state, "success");
    assert.match(polled.body.result_message ?? "", /saved/);
    assert.equal((await stored("saved_pg")).password, pg.password, "saved with its password");

    const failing = await send<{ token: string; state: string }>("POST", "/api/v2/connections/enqueue-test", { connection_id: "nowhere", conn_type: "http", host: "127.0.0.1", port: await closedPort(), commit_on_success: true }, testing);
    assert.equal(failing.body.state, "failed");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/nowhere")).status, 404, "a failed test saves nothing");

    const noHeader = await call(testing.baseUrl, "GET", "/api/v2/connections/enqueue-test");
    assert.equal(noHeader.status, 422);
    assert.equal(noHeader.body.field, "Airflow-Connection-Test-Token");
    assert.equal((await call(testing.baseUrl, "GET", "/api/v2/connections/enqueue-test", { headers: { "Airflow-Connection-Test-Token": "no-such-token" } })).status, 404);
    const standCommit = await send("POST", "/api/v2/connections/enqueue-test", { connection_id: "stand_postgres", conn_type: "postgres", commit_on_success: true }, testing);
    assert.equal(standCommit.status, 409, standCommit.text);
    // Airflow documents this 422 as HTTPExceptionResponse, yet FastAPI answers its validation list, as here
    const executor = await call(testing.baseUrl, "POST", "/api/v2/connections/enqueue-test", { headers: auth, body: { connection_id: "x", conn_type: "http", executor: "celery" }, airflowCheck: false });
    assert.equal(executor.status, 422);
    assert.equal(executor.body.field, "executor");
  });

  void it("each connections route answered a 2xx above that validated against Airflow's document", () => {
    const ours = api.app.routeSpecs.filter((spec) => spec.path.startsWith("/api/v2/connections"));
    assert.equal(ours.length, 10);
    const unseen = ours.filter((spec) => ![...validatedAnswers].some((seen) => new RegExp(`^${spec.method.toUpperCase()} ${spec.path.replace(/[{}]/g, "\\$&")} 2\\d\\d$`).test(seen)));
    assert.deepEqual(unseen.map((s) => `${s.method.toUpperCase()} ${s.path}`), []);
  });
});
