// Backfills as Airflow 3's: the dry run lists the dates (forward and backwards) and makes nothing;
// a backfill makes runs of type backfill, never more of them active than its max_active_runs (each
// run holds until the test releases it, so the bound is checked by construction); reprocess_behavior
// none, failed and completed; pause and unpause; cancel fails the queued runs; the 409s and 422s;
// the list's filters and order_by; and two runners on one database never make a date's run twice.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import type pg from "pg";
import { z } from "zod";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { advanceBackfills } from "../../src/runner/backfill-runs.ts";
import { createPool } from "../../src/runner/db.ts";
import { defineDag, NonRetryableError, type Runner } from "../../src/runner/index.ts";
import type { ProblemBody } from "../../src/api/index.ts";
import { TEST_USER, auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { startRunner, useTestRunner, waitUntil, withClient } from "../../testkit/runner/runner-db.ts";

/** Runs whose conf says hold wait here, by logical date, until the test releases them (30 s at most). */
const holds = new Map<string, { release: () => void; released: Promise<void> }>();
function hold(key: string) {
  let entry = holds.get(key);
  if (!entry) {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    entry = { release, released };
    holds.set(key, entry);
  }
  return entry;
}
let holding = 0;
let mostHeld = 0;
/** Runs with conf tag "overlap" nap a little, counted, so runs that could overlap do. */
let napping = 0;
let mostNapping = 0;

const params = z.object({ hold: z.boolean().optional(), fail: z.boolean().optional(), tag: z.string().optional() }).strict();
const work = async (ctx: { logicalDate: Date | null; conf: z.infer<typeof params>; signal: AbortSignal }) => {
  if (ctx.conf.hold === true) {
    holding++;
    mostHeld = Math.max(mostHeld, holding);
    // the 30 s cap ends with the hold, or its timer would keep the test process alive
    const held = new AbortController();
    const cap = sleep(30_000, undefined, { signal: AbortSignal.any([ctx.signal, held.signal]) }).catch(() => undefined);
    try {
      await Promise.race([hold(ctx.logicalDate?.toISOString() ?? "").released, cap]);
    } finally {
      held.abort();
      holding--;
    }
  }
  if (ctx.conf.tag === "overlap") {
    napping++;
    mostNapping = Math.max(mostNapping, napping);
    await sleep(30, undefined, { signal: ctx.signal }).finally(() => napping--);
  }
  if (ctx.conf.fail === true) throw new NonRetryableError("the conf asked this run to fail");
};

const dags = [
  defineDag({ id: "bf_daily", schedule: { everySeconds: 86_400 }, maxActiveRuns: 16, params }).task("work", work).build(),
  defineDag({ id: "bf_narrow", schedule: { everySeconds: 86_400 }, maxActiveRuns: 1, params }).task("work", work).build(),
  defineDag({ id: "bf_hourly", schedule: "0 * * * *", maxActiveRuns: 16, params }).task("work", work).build(),
  defineDag({ id: "bf_pool", schedule: { everySeconds: 3600 }, maxActiveRuns: 8, params }).task("work", work).build(),
  defineDag({ id: "bf_manual", params }).task("work", work).build(),
];

interface Backfill {
  id: number;
  dag_id: string;
  from_date: string;
  to_date: string;
  dag_run_conf: Record<string, unknown> | null;
  is_paused: boolean;
  reprocess_behavior: string;
  max_active_runs: number;
  completed_at: string | null;
}
type Runs = { dag_runs: DagRunResponse[]; total_entries: number };
const day = (d: string) => `${d}T00:00:00.000Z`;

void describe("backfills", () => {
  let api: ApiHarness;
  let bearer: Record<string, string> = {};
  let pool: pg.Pool;
  const engine = useTestRunner(dags, {
    concurrency: 8,
    beforeStop: async () => {
      for (const entry of holds.values()) entry.release();
      await pool?.end();
      await api?.close();
    },
  });

  before(async () => {
    api = await startApi(engine.runner);
    pool = createPool(engine.db.url, 4);
    const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: TEST_USER });
    bearer = { Authorization: `Bearer ${login.body.access_token}` };
  });

  const post = <T = ProblemBody>(path: string, body: unknown) => call<T>(api.baseUrl, "POST", path, { headers: bearer, body });
  const put = (id: number, action: string) => call<Backfill>(api.baseUrl, "PUT", `/api/v2/backfills/${id}/${action}`, { headers: bearer });
  const dryRun = async (body: Record<string, unknown>) => {
    const res = await post<{ backfills: { logical_date: string }[]; total_entries: number }>("/api/v2/backfills/dry_run", body);
    assert.equal(res.status, 200, res.text);
    return res.body.backfills.map((b) => b.logical_date);
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await post<Backfill>("/api/v2/backfills", body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const backfillRuns = async (dagId: string) => {
    const res = await call<Runs>(api.baseUrl, "GET", `/api/v2/dags/${dagId}/dagRuns?run_type=backfill&order_by=logical_date&limit=100`);
    assert.equal(res.status, 200, res.text);
    return res.body.dag_runs;
  };
  /** One step of every runner's backfill loop, now (the loops take it every second too). */
  const step = () => advanceBackfills(pool, engine.runner.registry);
  const waitEnded = (runner: Runner, dagId: string, runId: string) => runner.waitForRun(dagId, runId, { timeoutMs: 20_000 });
  const completed = (id: number) =>
    waitUntil(`backfill ${id} to complete`, async () => {
      await step();
      const res = await call<Backfill>(api.baseUrl, "GET", `/api/v2/backfills/${id}`);
      return res.body.completed_at !== null && res.body;
    }, 20_000);
  const reasons = (id: number) =>
    withClient(engine.db, async (c) => {
      const { rows } = await c.query<{ logical_date: Date; exception_reason: string | null; run_id: string | null }>(
        `select b.logical_date, b.exception_reason, r.run_id from runner.backfill_dag_runs b left join runner.dag_runs r on r.id = b.dag_run_pk
          where b.backfill_id = $1 order by b.sort_ordinal`,
        [id],
      );
      return rows.map((r) => [r.logical_date.toISOString(), r.exception_reason ?? r.run_id]);
    });

  void it("dry run: the schedule's past instants in the window, forward and backwards, and nothing made", async () => {
    const window = { dag_id: "bf_hourly", from_date: "2025-01-01T00:00:00Z", to_date: "2025-01-01T03:00:00Z" };
    const hours = ["00", "01", "02", "03"].map((h) => `2025-01-01T${h}:00:00.000Z`);
    assert.deepEqual(await dryRun(window), hours);
    assert.deepEqual(await dryRun({ ...window, run_backwards: true }), [...hours].reverse());
    assert.deepEqual(await dryRun({ ...window, from_date: "2025-01-01T00:30:00Z" }), hours.slice(1), "a cron's fire times, not the window's ends");
    // an interval schedule has no instants of its own: from from_date on, as Airflow's timedelta schedules
    assert.deepEqual(await dryRun({ dag_id: "bf_daily", from_date: "2025-01-01T06:00:00Z", to_date: "2025-01-03T06:00:00Z" }), ["01", "02", "03"].map((d) => `2025-01-${d}T06:00:00.000Z`));
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const past = await dryRun({ dag_id: "bf_daily", from_date: new Date(Date.now() - 1.5 * 86_400_000).toISOString(), to_date: soon });
    assert.equal(past.length, 2, "instants still to come are the scheduler's");
    const list = await call<{ backfills: unknown[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/backfills?dag_id=bf_hourly");
    assert.deepEqual([list.status, list.body.total_entries], [200, 0]);
    assert.deepEqual(await backfillRuns("bf_hourly"), []);
  });

  void it("refuses what no backfill serves: 404 for an unknown DAG, 422 with the field for the rest", async () => {
    const base = { dag_id: "bf_daily", from_date: "2025-01-01T00:00:00Z", to_date: "2025-01-02T00:00:00Z" };
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ ...base, dag_id: "no_such_dag" }, 404, "dag_id", /not known/],
      [{ ...base, dag_id: "bf_manual" }, 422, "dag_id", /has no schedule/],
      [{ ...base, from_date: "2025-01-03T00:00:00Z" }, 422, "from_date", /must not be after to_date/],
      [{ ...base, from_date: new Date(Date.now() + 60_000).toISOString(), to_date: "2099-01-01T00:00:00Z" }, 422, "from_date", /future dates/],
      [{ ...base, dag_id: "bf_hourly", from_date: "2020-01-01T00:00:00Z" }, 422, "to_date", /more than 10000 instants/],
      [{ ...base, dag_run_conf: { hold: "yes" } }, 422, "dag_run_conf.hold", /expected boolean/i],
      [{ ...base, max_active_runs: 0 }, 422, "max_active_runs", /at least 1/],
      [{ ...base, reprocess_behavior: "sometimes" }, 422, "reprocess_behavior", /./],
    ];
    for (const [body, status, field, text] of cases) {
      for (const path of ["/api/v2/backfills", "/api/v2/backfills/dry_run"]) {
        const res = await post(path, body);
        assert.equal(res.status, status, `${path} ${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.field, field, res.text);
        assert.match(problemText(res.body), text);
      }
    }
    assert.equal((await call(api.baseUrl, "POST", "/api/v2/backfills", { body: base })).status, 401, "a change needs credentials");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/backfills/999999")).status, 404);
    for (const action of ["pause", "unpause", "cancel"]) assert.equal((await put(999_999, action)).status, 404);
  });

  void it("makes runs of type backfill, never more than max_active_runs active at once", async () => {
    mostHeld = 0;
    const dates = ["01", "02", "03", "04", "05"].map((d) => day(`2025-02-${d}`));
    const b = await create({ dag_id: "bf_daily", from_date: dates[0], to_date: dates[4], max_active_runs: 2, dag_run_conf: { hold: true } });
    assert.deepEqual([b.max_active_runs, b.reprocess_behavior, b.is_paused, b.completed_at, b.dag_run_conf], [2, "none", false, null, { hold: true }]);
    const first = await backfillRuns("bf_daily");
    assert.deepEqual(first.map((r) => r.dag_run_id), dates.slice(0, 2).map((d) => `backfill__${d}`), "the first wave is made before the answer");
    assert.deepEqual(first.map((r) => [r.run_type, r.triggered_by, r.triggering_user_name]), Array(2).fill(["backfill", "backfill", TEST_USER.username]));
    for (const [i, date] of dates.entries()) {
      await step();
      const runs = await backfillRuns("bf_daily");
      assert.equal(runs.length, Math.min(i + 2, 5), `while ${date} holds, the step makes no run beyond max_active_runs`);
      assert.ok(runs.filter((r) => r.state === "queued" || r.state === "running").length <= 2);
      hold(date).release();
      await waitEnded(engine.runner, "bf_daily", `backfill__${date}`);
    }
    const done = await completed(b.id);
    assert.ok(done.completed_at !== null);
    const runs = await backfillRuns("bf_daily");
    assert.deepEqual(runs.map((r) => [r.logical_date, r.state]), dates.map((d) => [d, "success"]));
    assert.equal(mostHeld, 2, "two runs held at once at most, and two did");
    const listed = await call<Runs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns?run_type=backfill&limit=100");
    assert.equal(listed.body.total_entries, 5, "the run list's run_type filter finds them");
  });

  void it("reprocess_behavior none, failed and completed; a date with an active run is skipped", async () => {
    const [ok, failed, held, fresh] = ["01", "02", "03", "04"].map((d) => day(`2025-03-${d}`)) as [string, string, string, string];
    const trigger = async (logicalDate: string, conf: Record<string, unknown>) => {
      const res = await post<DagRunResponse>("/api/v2/dags/bf_daily/dagRuns", { logical_date: logicalDate, conf });
      assert.equal(res.status, 200, res.text);
      return res.body.dag_run_id;
    };
    const okRun = await trigger(ok, {});
    const failedRun = await trigger(failed, { fail: true });
    const heldRun = await trigger(held, { hold: true });
    assert.equal((await waitEnded(engine.runner, "bf_daily", okRun)).state, "success");
    assert.equal((await waitEnded(engine.runner, "bf_daily", failedRun)).state, "failed");
    const window = { dag_id: "bf_daily", from_date: ok, to_date: fresh };
    assert.deepEqual(await dryRun({ ...window, reprocess_behavior: "none" }), [fresh]);
    assert.deepEqual(await dryRun({ ...window, reprocess_behavior: "failed" }), [failed, fresh]);
    assert.deepEqual(await dryRun({ ...window, reprocess_behavior: "completed" }), [ok, failed, fresh]);

    const none = await create({ ...window });
    await completed(none.id);
    assert.deepEqual(await reasons(none.id), [[ok, "already exists"], [failed, "already exists"], [held, "in flight"], [fresh, `backfill__${fresh}`]]);

    // the failed run is cleared and run again in place, with the backfill's conf
    const again = await create({ ...window, reprocess_behavior: "failed", dag_run_conf: {} });
    await completed(again.id);
    assert.deepEqual(await reasons(again.id), [[ok, "already exists"], [failed, failedRun], [held, "in flight"], [fresh, "already exists"]]);
    const rerun = await engine.runner.getRun("bf_daily", failedRun);
    assert.deepEqual([rerun.state, rerun.runType, rerun.conf], ["success", "backfill", {}]);

    const all = await create({ ...window, reprocess_behavior: "completed" });
    await completed(all.id);
    assert.deepEqual(await reasons(all.id), [[ok, okRun], [failed, failedRun], [held, "in flight"], [fresh, `backfill__${fresh}`]]);
    const tries = await withClient(engine.db, async (c) =>
      (await c.query<{ run_id: string; try_number: number }>("select r.run_id, ti.try_number from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk where r.run_id = any($1) order by r.run_id", [[okRun, failedRun, `backfill__${fresh}`]])).rows,
    );
    assert.deepEqual(tries.map((t) => [t.run_id, t.try_number]).sort(), [[okRun, 2], [failedRun, 3], [`backfill__${fresh}`, 2]].sort(), "each date's run ran again, none was added");
    assert.equal((await engine.runner.getRun("bf_daily", okRun)).runType, "backfill");
    hold(held).release();
    assert.equal((await waitEnded(engine.runner, "bf_daily", heldRun)).state, "success");
  });

  void it("pause stops new runs, the active one finishes; unpause makes the next at once", async () => {
    const dates = ["01", "02", "03"].map((d) => day(`2025-04-${d}`));
    const b = await create({ dag_id: "bf_daily", from_date: dates[0], to_date: dates[2], max_active_runs: 1, dag_run_conf: { hold: true }, run_backwards: true });
    assert.deepEqual((await backfillRuns("bf_daily")).filter((r) => r.logical_date?.startsWith("2025-04")).map((r) => r.logical_date), [dates[2]], "newest first");
    const paused = await put(b.id, "pause");
    assert.deepEqual([paused.status, paused.body.is_paused], [200, true]);
    hold(dates[2] ?? "").release();
    await waitEnded(engine.runner, "bf_daily", `backfill__${dates[2]}`);
    await step();
    assert.equal((await backfillRuns("bf_daily")).filter((r) => r.logical_date?.startsWith("2025-04")).length, 1, "paused: no new run");
    const unpaused = await put(b.id, "unpause");
    assert.deepEqual([unpaused.status, unpaused.body.is_paused], [200, false]);
    assert.deepEqual((await backfillRuns("bf_daily")).filter((r) => r.logical_date?.startsWith("2025-04")).map((r) => r.logical_date), [dates[1], dates[2]]);
    for (const d of dates) hold(d).release();
    await completed(b.id);
    for (const action of ["pause", "unpause", "cancel"]) {
      const res = await call(api.baseUrl, "PUT", `/api/v2/backfills/${b.id}/${action}`, { headers: bearer });
      assert.equal(res.status, 409, `${action} of a completed backfill: ${res.text}`);
      assert.match(problemText(res.body), /already completed/);
    }
    // the event log names the DAG of each backfill call, though only create's body and no path names it
    const logged = await call(api.baseUrl, "GET", `/api/v2/eventLogs?event_pattern=backfill&order_by=id&limit=100`, { headers: auth });
    const mine = (logged.body as unknown as { event_logs: { event: string; dag_id: string | null; extra: string | null }[] }).event_logs.filter(
      (e) => e.event === "create_backfill" ? (e.extra ?? "").includes(dates[0] ?? "?") : true,
    );
    const events = mine.map((e) => [e.event, e.dag_id]);
    for (const expected of [["create_backfill", "bf_daily"], ["pause_backfill", "bf_daily"], ["unpause_backfill", "bf_daily"]]) {
      assert.ok(events.some((e) => e[0] === expected[0] && e[1] === expected[1]), `event log holds ${expected.join(" on ")}: ${JSON.stringify(events)}`);
    }
  });

  void it("a paused DAG's backfill waits queued; cancel fails the queued runs and completes it, the running one finishes", async () => {
    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags/bf_narrow", { headers: auth, body: { is_paused: true } })).status, 200);
    const dates = ["01", "02", "03", "04"].map((d) => day(`2025-05-${d}`));
    const b = await create({ dag_id: "bf_narrow", from_date: dates[0], to_date: dates[3], max_active_runs: 2, dag_run_conf: { hold: true } });
    assert.deepEqual((await backfillRuns("bf_narrow")).map((r) => r.state), ["queued", "queued"]);
    const twice = await post("/api/v2/backfills", { dag_id: "bf_narrow", from_date: dates[0], to_date: dates[1] });
    assert.equal(twice.status, 409, twice.text);
    assert.match(problemText(twice.body), new RegExp(`already a running backfill for DAG 'bf_narrow' \\(backfill ${b.id}`));
    // unpaused, the DAG's own max_active_runs (1) starts one of the two
    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags/bf_narrow", { headers: auth, body: { is_paused: false } })).status, 200);
    await waitUntil("the first backfill run to start", async () => (await engine.runner.getRun("bf_narrow", `backfill__${dates[0]}`)).state === "running");
    const cancelled = await put(b.id, "cancel");
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.ok(cancelled.body.completed_at !== null && cancelled.body.is_paused);
    const after = await engine.runner.getRun("bf_narrow", `backfill__${dates[1]}`);
    assert.equal(after.state, "failed");
    assert.match(after.note ?? "", new RegExp(`cancel of backfill ${b.id} by ${TEST_USER.username}`));
    assert.equal((await engine.runner.getRun("bf_narrow", `backfill__${dates[0]}`)).state, "running", "a running run finishes");
    hold(dates[0] ?? "").release();
    assert.equal((await waitEnded(engine.runner, "bf_narrow", `backfill__${dates[0]}`)).state, "success");
    await step();
    assert.equal((await backfillRuns("bf_narrow")).length, 2, "no run after the cancel");
    // a cancelled backfill no longer blocks the DAG's next one
    const next = await create({ dag_id: "bf_narrow", from_date: dates[2], to_date: dates[3], dag_run_conf: { hold: true } });
    assert.equal((await put(next.id, "cancel")).status, 200);
    hold(dates[2] ?? "").release();
    assert.equal((await waitEnded(engine.runner, "bf_narrow", `backfill__${dates[2]}`)).state, "success");
    assert.equal((await engine.runner.getRun("bf_narrow", `backfill__${dates[3]}`)).state, "failed");
  });

  void it("lists a DAG's backfills with limit, offset and order_by", async () => {
    const all = await call<{ backfills: Backfill[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/backfills?dag_id=bf_daily");
    assert.equal(all.status, 200, all.text);
    const ids = all.body.backfills.map((b) => b.id);
    assert.equal(all.body.total_entries, 5);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "by id by default");
    assert.ok(all.body.backfills.every((b) => b.dag_id === "bf_daily"));
    const desc = await call<{ backfills: Backfill[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/backfills?dag_id=bf_daily&order_by=-id&limit=2&offset=1");
    assert.deepEqual([desc.body.backfills.map((b) => b.id), desc.body.total_entries], [[...ids].reverse().slice(1, 3), 5]);
    const past = await call<{ backfills: Backfill[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/backfills?dag_id=bf_daily&offset=50");
    assert.deepEqual([past.body.backfills, past.body.total_entries], [[], 5], "past the last page the total stays");
    const one = await call<Backfill>(api.baseUrl, "GET", `/api/v2/backfills/${ids[0]}`);
    assert.deepEqual(one.body, all.body.backfills[0]);
    for (const bad of ["", "?dag_id=bf_daily&order_by=dag_id", "?dag_id=bf_daily&limit=0"]) {
      assert.equal((await call(api.baseUrl, "GET", `/api/v2/backfills${bad}`)).status, 422, bad);
    }
  });

  void describe("two runners on one database", () => {
    let second: Runner | undefined;
    before(async () => {
      second = await startRunner(engine.db, dags, { concurrency: 4 });
    });
    after(async () => {
      await second?.stop();
    });

    void it("never make a date's run twice", async () => {
      const from = "2025-06-01T00:00:00.000Z";
      const b = await create({ dag_id: "bf_pool", from_date: from, to_date: "2025-06-02T05:00:00.000Z", max_active_runs: 6, dag_run_conf: { tag: "overlap" } });
      const extra = [createPool(engine.db.url, 2), createPool(engine.db.url, 2)];
      try {
        // both runners' loops, and two more steppers as eager as they can be
        const racing = extra.map(async (p) => {
          for (let i = 0; i < 40; i++) await advanceBackfills(p, engine.runner.registry);
        });
        await Promise.all([...racing, completed(b.id)]);
      } finally {
        await Promise.all(extra.map((p) => p.end()));
      }
      const counts = await withClient(engine.db, async (c) =>
        (await c.query<{ runs: number; dates: number; made: number; skipped: number }>(
          `select (select count(*)::int from runner.dag_runs where dag_id = 'bf_pool' and run_type = 'backfill') as runs,
                  (select count(distinct logical_date)::int from runner.dag_runs where dag_id = 'bf_pool' and run_type = 'backfill') as dates,
                  (select count(*)::int from runner.backfill_dag_runs where backfill_id = $1 and dag_run_pk is not null) as made,
                  (select count(*)::int from runner.backfill_dag_runs where backfill_id = $1 and exception_reason is not null) as skipped`,
          [b.id],
        )).rows[0],
      );
      assert.deepEqual(counts, { runs: 30, dates: 30, made: 30, skipped: 0 }, "each date made once, none lost to a clash");
      assert.ok(mostNapping <= 6, `${mostNapping} runs ran at once, over the backfill's max_active_runs of 6`);
      assert.ok(mostNapping >= 2, "the runs overlapped (the bound was tested)");
    });
  });
});
