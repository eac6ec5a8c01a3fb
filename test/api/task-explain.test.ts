// Why a task instance is not running (Airflow's dependencies) and its tries, each state reached by
// construction: a pause point holds a first task (its downstream waits on it), a run of a DAG that
// holds an exclusive resource makes the next one wait (naming the holder), a paused DAG keeps its
// run queued, a failing try waits out its retry delay; and the map_index routes answer for -1 only.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import pg from "pg";
import { defineDag } from "../../src/runner/index.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { until } from "../../testkit/runner/dag-folder.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

const held = defineDag({ id: "ex_held", exclusive: ["slot"], fileloc: "test/api/task-explain.test.ts" })
  .task("first", () => undefined)
  .task("second", { upstream: ["first"] }, () => undefined)
  .build();
const waiter = defineDag({ id: "ex_waiter", exclusive: ["slot"], fileloc: "test/api/task-explain.test.ts" }).task("only", () => undefined).build();
const flaky = defineDag({ id: "ex_flaky", fileloc: "test/api/task-explain.test.ts" })
  .task("fails", { retries: 2, retryDelayMs: 600_000 }, () => {
    throw new Error("not yet");
  })
  .build();

type Deps = { dependencies: { name: string; reason: string }[] };
type Tries = { task_instances: { try_number: number; state: string; error: string | null; hostname: string | null }[]; total_entries: number };

void describe("task instance dependencies and tries", () => {
  let api: ApiHarness;
  let sql: pg.Pool;
  const engine = useTestRunner([held, waiter, flaky], { failPoints: true, beforeStop: async () => { await api?.close(); await sql?.end(); } });
  const ti = (dag: string, run: string, task: string) => `/api/v2/dags/${dag}/dagRuns/${encodeURIComponent(run)}/taskInstances/${task}`;
  const deps = async (path: string) => {
    const res = await call<Deps>(api.baseUrl, "GET", `${path}/dependencies`);
    assert.equal(res.status, 200, res.text);
    return res.body.dependencies;
  };

  before(async () => {
    api = await startApi(engine.runner);
    sql = new pg.Pool({ connectionString: engine.db.url, max: 2 });
  });

  void it("names the upstream a task waits on, the resource a queued run waits for and its holder, and a paused DAG", async () => {
    const { rows } = await sql.query<{ id: string }>("insert into runner.pause_points (dag_id, task_id, phase, note) values ('ex_held', 'first', 'before', 'explain') returning id");
    const holder = await engine.runner.triggerRun("ex_held", { triggeredBy: "test" });
    await until("first held at its pause point", async () => (await sql.query("select 1 from runner.pause_points where id = $1 and reached_at is not null", [rows[0]?.id])).rowCount === 1);

    assert.deepEqual(await deps(ti("ex_held", holder.runId, "first")), [], "a running task has nothing holding it");
    const second = await deps(ti("ex_held", holder.runId, "second"));
    assert.equal(second[0]?.name, "Trigger Rule");
    assert.match(second[0]?.reason ?? "", /not yet: first \(running\)/);

    const queued = await engine.runner.triggerRun("ex_waiter", { triggeredBy: "test" });
    const waiting = await deps(ti("ex_waiter", queued.runId, "only"));
    assert.equal(waiting[0]?.name, "Exclusive Resource");
    assert.match(waiting[0]?.reason ?? "", new RegExp(`slot held by ex_held/${holder.runId}`));

    await engine.runner.setPaused("ex_waiter", true);
    const paused = await deps(ti("ex_waiter", queued.runId, "only"));
    assert.deepEqual(paused.map((d) => d.name), ["Dag Not Paused", "Exclusive Resource"]);
    await engine.runner.setPaused("ex_waiter", false);

    await sql.query("update runner.pause_points set released_at = now() where id = $1", [rows[0]?.id]);
    assert.equal((await engine.runner.waitForRun("ex_held", holder.runId, { timeoutMs: 20_000 })).state, "success");
    assert.equal((await engine.runner.waitForRun("ex_waiter", queued.runId, { timeoutMs: 20_000 })).state, "success");
    const done = await deps(ti("ex_held", holder.runId, "second"));
    assert.deepEqual(done.map((d) => d.name), ["Task Instance State"]);
    assert.match(done[0]?.reason ?? "", /'success' state/);
  });

  void it("a failed try waiting for its retry says until when; its tries list the failed one with its error", async () => {
    const run = await engine.runner.triggerRun("ex_flaky", { triggeredBy: "test" });
    const path = ti("ex_flaky", run.runId, "fails");
    await until("the first try failed and waits for its retry", async () => {
      const t = (await engine.runner.listTaskInstances("ex_flaky", run.runId))[0];
      return t?.state === "up_for_retry" ? true : undefined;
    });
    const waiting = await deps(path);
    assert.equal(waiting[0]?.name, "Not In Retry Period");
    assert.match(waiting[0]?.reason ?? "", /Try 1 of 3 failed; the next try waits until 20\d\d-/);

    const tries = await call<Tries>(api.baseUrl, "GET", `${path}/tries`);
    assert.equal(tries.status, 200, tries.text);
    assert.deepEqual(tries.body.task_instances.map((t) => [t.try_number, t.state]), [[1, "failed"]]);
    assert.match(tries.body.task_instances[0]?.error ?? "", /not yet/);
    const one = await call<Tries["task_instances"][number]>(api.baseUrl, "GET", `${path}/tries/1`);
    assert.deepEqual([one.status, one.body.try_number], [200, 1]);
    assert.equal((await call(api.baseUrl, "GET", `${path}/tries/2`)).status, 404);
    const byIndex = await call<Tries>(api.baseUrl, "GET", `${path}/-1/tries`);
    assert.deepEqual(byIndex.body, tries.body);
    await engine.runner.patchRun("ex_flaky", run.runId, { state: "failed" }, { by: "test" });
  });

  void it("map_index routes answer for -1 and are 404 for any other index; listMapped is 404 (not mapped), as Airflow's", async () => {
    const run = await engine.runner.triggerRun("ex_held", { triggeredBy: "test" });
    await engine.runner.waitForRun("ex_held", run.runId, { timeoutMs: 20_000 });
    const path = ti("ex_held", run.runId, "second");
    const byIndex = await call<{ task_id: string; map_index: number }>(api.baseUrl, "GET", `${path}/-1`);
    assert.deepEqual([byIndex.status, byIndex.body.task_id, byIndex.body.map_index], [200, "second", -1]);
    for (const p of [`${path}/0`, `${path}/3/tries`, `${path}/tries?map_index=2`, `${path}/listMapped`]) {
      const res = await call<{ field?: string }>(api.baseUrl, "GET", p);
      assert.equal(res.status, 404, `${p}: ${res.text}`);
    }
    const dry = await call<{ task_instances: { state: string }[] }>(api.baseUrl, "PATCH", `${path}/-1/dry_run`, { headers: auth, body: { new_state: "failed" } });
    assert.deepEqual([dry.status, dry.body.task_instances.map((t) => t.state)], [200, ["success"]], "a dry run changes nothing");
    assert.equal((await engine.runner.listTaskInstances("ex_held", run.runId)).find((t) => t.taskId === "second")?.state, "success");
    const noted = await call<{ task_instances: { note: string | null }[] }>(api.baseUrl, "PATCH", `${path}/-1?update_mask=note`, { headers: auth, body: { note: "checked" } });
    assert.deepEqual([noted.status, noted.body.task_instances[0]?.note], [200, "checked"]);
    const links = await call<{ extra_links: object; total_entries: number }>(api.baseUrl, "GET", `${path}/links`);
    assert.deepEqual(links.body, { extra_links: {}, total_entries: 0 });
    const external = await call<{ field?: string }>(api.baseUrl, "GET", `${path}/externalLogUrl/1`);
    assert.equal(external.status, 400);
    assert.match(external.text, /logs\/1/);
  });
});
