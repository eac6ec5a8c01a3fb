// Reruns converge (issue 10, item 4), on the test stand (never the user's): tasks of the world DAGs
// fail once AFTER their work is done (a fail point, 000011) — in make test the sample its seed draws
// of every task of every world DAG (testkit/matrices.ts), in make test-full every one — and are run again, as an
// operator's clear or the trigger's retry would; the world that results equals the one the same
// steps build uninterrupted: same position, and in ODS, DDS and DM the same rows (per table: the
// count and a checksum of every business column, read merged). STG may hold the replayed messages
// twice (docs/world.md); the commit ledgers record every build, so they are not compared.
// (The seed's "stopped before the position was set" is test/faults/step-faults.test.ts.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clickhouseNodeConfig, connectClickHouse } from "../../src/clickhouse/client.ts";
import { loadStandConfig } from "../../src/config/stand.ts";
import { loadPassport } from "../../src/world/passport.ts";
import { expectCanonicalOds } from "../../testkit/world/world-checks.ts";
import {
  api,
  describeRun,
  readPositionText,
  taskInstances,
  triggerRun,
  useRunnerService,
  waitForRun,
  withRunnerDb,
  type FinishedRun,
} from "../../testkit/world/rest-world.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { sampleMatrix } from "../../testkit/matrix.ts";
import { RERUN_FAIL_POINTS, type RerunPoint } from "../../testkit/matrices.ts";

/** In the gate, the fail points the seed draws (testkit/matrices.ts); in make test-full, every one. */
const sample = sampleMatrix(RERUN_FAIL_POINTS);

const enc = encodeURIComponent;
const LAYERS = ["ods", "dds", "dm"] as const;

/** Arms one 'after' fail point on each sampled task of the step's family; returns how many. */
async function armSampled(step: RerunPoint["step"]): Promise<number> {
  const points = sample.points.filter((p) => p.step === step);
  await withRunnerDb(async (client) => {
    await client.query("delete from runner.fail_points");
    for (const p of points) {
      await client.query("insert into runner.fail_points (dag_id, task_id, phase, note) values ($1, $2, 'after', 'reruns-converge')", [p.dag, p.task]);
    }
  });
  return points.length;
}

async function armedLeft(): Promise<string[]> {
  return withRunnerDb(async (client) =>
    (await client.query<{ point: string }>("select dag_id || '.' || task_id as point from runner.fail_points where remaining > 0 order by id")).rows.map((r) => r.point),
  );
}

/**
 * Runs the step; whenever the run fails, clears its failed tasks (with their downstream), as an
 * operator would, until it succeeds. Failures inside a child run reach the parent's waiting trigger,
 * whose retry (or clear) runs the child's failed part again in the same child run.
 */
async function runClearingFailures(dagId: string, conf: Record<string, unknown>, maxClears: number): Promise<{ finished: FinishedRun; clears: number }> {
  const started = Date.now();
  const run = await triggerRun(dagId, conf);
  let clears = 0;
  for (;;) {
    const ended = await waitForRun(dagId, run.dag_run_id, 900);
    const tasks = await taskInstances(dagId, run.dag_run_id);
    const finished = { run: ended, tasks, seconds: (Date.now() - started) / 1000 };
    if (ended.state === "success") return { finished, clears };
    assert.ok(clears < maxClears, `more than ${maxClears} clears: ${describeRun(finished)}`);
    await api.request("POST", `api/v2/dags/${enc(dagId)}/clearTaskInstances`, {
      body: { dag_run_id: run.dag_run_id, only_failed: true, include_downstream: true, dry_run: false },
    });
    clears += 1;
  }
}

interface TableState {
  rows: number;
  checksum: string;
}

/** Every ODS/DDS/DM table's rows, read merged, and a checksum of its business columns. */
async function layerState(): Promise<Map<string, TableState>> {
  const config = loadStandConfig();
  const state = new Map<string, TableState>();
  for (const node of config.clickhouse.nodes) {
    const ch = connectClickHouse({ node: clickhouseNodeConfig(node.name, config).name, account: "admin", config });
    try {
      const tables = await ch.query<{ database: string; name: string; engine: string }>(
        `SELECT database, name, engine FROM system.tables
          WHERE database IN (${LAYERS.map((l) => `'${l}'`).join(", ")}) AND engine LIKE '%MergeTree' AND name NOT LIKE '%ledger%'
          ORDER BY database, name`,
      );
      for (const t of tables) {
        const columns = await ch.query<{ name: string }>(
          `SELECT name FROM system.columns WHERE database = '${t.database}' AND table = '${t.name}'
             AND NOT startsWith(name, '_') AND name NOT IN ('kafka_partition', 'kafka_offset') ORDER BY name`,
        );
        const merging = /Replacing|Collapsing/.test(t.engine);
        // merge what merges first (the test stand's world; merging changes no row as read FINAL),
        // so FINAL below has few parts to merge in memory: a replayed day doubles the raw rows
        if (merging) await ch.command(`OPTIMIZE TABLE \`${t.database}\`.\`${t.name}\` FINAL`);
        const final = merging ? " FINAL" : "";
        const hash = `cityHash64(${columns.map((c) => `toString(\`${c.name}\`)`).join(", ")})`;
        const [row] = await ch.query<{ n: string; h: string }>(
          `SELECT count() AS n, toString(sum(${hash})) AS h FROM \`${t.database}\`.\`${t.name}\`${final}`,
        );
        const key = `${t.database}.${t.name}`;
        const before = state.get(key) ?? { rows: 0, checksum: "0" };
        // UInt64 sums wrap; add them as BigInt modulo 2^64 across the nodes
        const checksum = ((BigInt(before.checksum) + BigInt(row?.h ?? "0")) % 2n ** 64n).toString();
        state.set(key, { rows: before.rows + Number(row?.n ?? 0), checksum });
      }
    } finally {
      await ch.close();
    }
  }
  return state;
}

function assertSameWorld(actual: Map<string, TableState>, expected: Map<string, TableState>, what: string): void {
  const differences: string[] = [];
  for (const key of new Set([...actual.keys(), ...expected.keys()])) {
    const a = actual.get(key);
    const e = expected.get(key);
    if (a?.rows !== e?.rows || a?.checksum !== e?.checksum) {
      differences.push(`${key}: ${a ? `${a.rows} rows` : "absent"} vs ${e ? `${e.rows} rows` : "absent"}${a && e && a.rows === e.rows ? " (same count, other rows)" : ""}`);
    }
  }
  assert.deepEqual(differences, [], `${what}: the world differs from the uninterrupted one`);
  assert.ok(expected.size >= 10, `the comparison saw ${expected.size} tables`);
}

describe(`reruns converge: world tasks failing once after their work, ${sample.how} (test stand)`, () => {
  let lock: WorldLock;
  let stopRunnerService: (() => Promise<void>) | undefined;
  const LIVE = { speed: 1_000_000 };
  let reference: Map<string, TableState>;
  let referencePosition: string | null;

  before(async () => {
    lock = await takeWorldLock();
    stopRunnerService = await useRunnerService();
    await withRunnerDb((client) => client.query("delete from runner.fail_points"));
  });

  after(async () => {
    try {
      await withRunnerDb((client) => client.query("delete from runner.fail_points"));
      await stopRunnerService?.();
    } finally {
      await lock.release();
    }
  });

  it("the reference: world_recreate, world_next_day and world_live_day, uninterrupted", async () => {
    for (const [dagId, conf] of [["world_recreate", {}], ["world_next_day", { days: 1 }], ["world_live_day", LIVE]] as const) {
      const { finished, clears } = await runClearingFailures(dagId, conf, 0);
      console.log(`reference: ${dagId} ${finished.run.state} in ${finished.seconds.toFixed(1)} s`);
      assert.equal(clears, 0);
    }
    referencePosition = await readPositionText();
    reference = await layerState();
    console.log(`reference world at position ${referencePosition}: ${[...reference.values()].reduce((s, t) => s + t.rows, 0)} rows in ${reference.size} tables`);
  });

  it("the same steps with the sampled tasks failing once after their work, then rerun: the same world", async () => {
    assert.ok(reference, "the reference test ran");
    const passport = await loadPassport();
    console.log(`fail points: ${sample.how}: ${sample.points.map((p) => RERUN_FAIL_POINTS.id(p)).join(", ")}`);
    const rerun = sample.rerunAll;
    for (const [dagId, conf] of [["world_recreate", {}], ["world_next_day", { days: 1 }], ["world_live_day", LIVE]] as const) {
      const armed = await armSampled(dagId);
      const { finished, clears } = await runClearingFailures(dagId, conf, armed + 5);
      const left = await armedLeft();
      const tries = [...finished.tasks.values()].map((t) => `${t.task_id} ${t.try_number}`).join(", ");
      console.log(`${dagId}: ${armed} fail points, ${clears} clears, ${finished.seconds.toFixed(1)} s; tries: ${tries}`);
      assert.deepEqual(left, [], `every armed point fired (${dagId}); rerun these points: ${rerun}`);
      if (dagId === "world_recreate") {
        assert.equal(await readPositionText(), String(passport.WORLD_STARTING_DAYS));
        await expectCanonicalOds(passport);
      }
    }
    assert.equal(await readPositionText(), referencePosition, `the same position; rerun these points: ${rerun}`);
    assertSameWorld(await layerState(), reference, `after the sampled tasks ran twice (rerun them: ${rerun})`);
  });
});
