// The position table's red rows, seen failing on the stand's runner: step DAGs refuse a missing,
// zero, negative, in-between or unreadable position (naming the value and the next step),
// world_initialize refuses -1 and 1…STARTING_DAYS-1 naming the number, the world_live switch goes
// red through its child, and no refusal writes the position. Also the shape of every world DAG.
// The position is restored afterwards; nothing here touches ClickHouse or Kafka.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DagResponse, DagRunResponse } from "../../src/api/schemas.ts";
import { WORLD_DAG_IDS } from "../../src/world/position.ts";
import { loadPassport } from "../../src/world/passport.ts";
import { worldDags } from "../../dags/index.ts";
import { DDL_FILES, ddlTaskId } from "../../dags/world_initialize.ts";
import { listDdlFiles } from "../../tasks/ddl.ts";
import {
  api,
  describeRun,
  positionHistory,
  readPositionText,
  runDag,
  setPositionText,
  stateOf,
  taskInstances,
  triggerRun,
  waitForRun,
  type FinishedRun,
} from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";

const { WORLD_STARTING_DAYS } = await loadPassport();

/** Lets a run the scheduler may have added finish (red at once without a world) before the switch goes off again. */
async function waitUntilNoActiveRuns(dagId: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 2500));
  for (let i = 0; i < 100; i++) {
    const page = await api.request<{ dag_runs: DagRunResponse[] }>("GET", `api/v2/dags/${dagId}/dagRuns`, { query: { limit: 5 } });
    if (page.dag_runs.every((r) => r.state === "success" || r.state === "failed")) return;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`${dagId} still has active runs`);
}

async function dag(dagId: string): Promise<DagResponse> {
  return api.request<DagResponse>("GET", `api/v2/dags/${dagId}`);
}

/** Runs the DAG at a position and checks the refusal: read_position red, the rest upstream_failed, no write. */
async function refusedAt(dagId: string, position: string | null, conf: Record<string, unknown> = {}): Promise<FinishedRun> {
  await setPositionText(position);
  const historyBefore = (await positionHistory()).length;
  const finished = await runDag(dagId, conf, 60);
  assert.equal(finished.run.state, "failed", describeRun(finished));
  assert.equal(stateOf(finished, "read_position"), "failed", describeRun(finished));
  for (const [taskId, ti] of finished.tasks) {
    if (taskId !== "read_position") assert.equal(ti.state, "upstream_failed", `${taskId}: ${describeRun(finished)}`);
  }
  assert.equal(await readPositionText(), position, "a refusal must not write the position");
  assert.equal((await positionHistory()).length, historyBefore, "a refusal must not record a change");
  return finished;
}

function refusal(finished: FinishedRun): string {
  return finished.tasks.get("read_position")?.error ?? "";
}

describe("world DAG guards (position table, red rows)", () => {
  let original: string | null | undefined;
  useWorldSuite({
    setUp: async () => {
      original = await readPositionText();
    },
    tearDown: async () => {
      if (original !== undefined) await setPositionText(original);
      await api.request("PATCH", "api/v2/dags/world_live", { body: { is_paused: true } }).catch(() => undefined);
    },
  });

  it("every world DAG is loaded with its contract: manual, unpaused, one run at a time; world_live scheduled and paused", async () => {
    assert.deepEqual(worldDags.map((d) => d.id), [...WORLD_DAG_IDS]);
    for (const dagId of WORLD_DAG_IDS) {
      const d = await dag(dagId);
      assert.equal(d.max_active_runs, 1, dagId);
      if (dagId === "world_live") {
        assert.notEqual(d.timetable_summary, null, "world_live has a schedule");
        assert.equal(d.is_paused, true, "world_live's pause flag is the switch and starts off");
      } else {
        assert.equal(d.timetable_summary, null, `${dagId} has no schedule`);
        assert.equal(d.is_paused, false, `${dagId} is not paused`);
      }
    }
  });

  it("world_initialize declares one task per sql/ddl file, in name order, between the topics and the catalogue record", async () => {
    const files = await listDdlFiles();
    assert.deepEqual([...DDL_FILES], files);
    assert.ok(files.length > 0);
    const ids = (await dag("world_initialize")).task_ids;
    const ddlIds = files.map(ddlTaskId);
    assert.deepEqual(ids, [
      "read_position", "clear_residue", "create_topics", ...ddlIds, "record_catalogue", "start_ingest", "build_generator", "play_starting_days", "wait_for_ods",
      "send_order_snapshots", "orders_ingest", "set_position", "etl_pipeline",
    ]);
    assert.deepEqual((await dag("world_recreate")).task_ids, [
      "invalidate_position", "stop_ingest", "drop_databases", "delete_consumer_groups", "delete_topics", "reset_position", "world_initialize",
    ]);
    assert.deepEqual((await dag("etl_pipeline")).task_ids, ["dds_transform", "dm_transform", "dq_check"]);
  });

  for (const dagId of ["world_next_day", "world_live_day"]) {
    it(`${dagId} refuses a missing or zero position and says to bring the stand up`, async () => {
      for (const position of [null, "0"]) {
        const message = refusal(await refusedAt(dagId, position));
        assert.match(message, position === null ? /world_position is not set/ : /world_position is 0\b/);
        assert.match(message, /make up/);
      }
    });

    it(`${dagId} refuses -1, a value below ${WORLD_STARTING_DAYS} and a non-number, and says to rebuild storage`, async () => {
      for (const [position, named] of [["-1", /world_position is -1\b/], ["3", /world_position is 3\b/], ["three", /'three', not a whole number/]] as const) {
        const message = refusal(await refusedAt(dagId, position));
        assert.match(message, named);
        assert.match(message, /make rebuild-storage/);
      }
    });
  }

  it("world_next_day accepts only 1 … 7 days", async () => {
    for (const days of [0, 8, 1.5]) {
      await assert.rejects(api.request("POST", "api/v2/dags/world_next_day/dagRuns", { body: { conf: { days } } }), /400.*days/);
    }
  });

  it("world_initialize refuses -1: cleanup unfinished, run make rebuild-storage", async () => {
    const message = refusal(await refusedAt("world_initialize", "-1"));
    assert.match(message, /world_position is -1\b.*cleanup unfinished, run make rebuild-storage/);
  });

  it(`world_initialize refuses every position from 1 to ${WORLD_STARTING_DAYS - 1} with the same refusal, naming the number`, async () => {
    for (const value of [1, WORLD_STARTING_DAYS - 1]) {
      const message = refusal(await refusedAt("world_initialize", String(value)));
      assert.match(message, new RegExp(`world_position is ${value}\\b.*cleanup unfinished, run make rebuild-storage`));
    }
  });

  it("the world_live switch has no guard of its own: switched on without a world, it goes red through world_live_day", async () => {
    await setPositionText(null);
    // a manual run waits queued while the switch is off; switching on starts it (and a scheduled run if one is due)
    const run = await triggerRun("world_live");
    assert.equal(run.state, "queued", "a paused DAG's run waits");
    await api.request("PATCH", "api/v2/dags/world_live", { body: { is_paused: false } });
    try {
      assert.equal((await waitForRun("world_live", run.dag_run_id, 60)).state, "failed");
      await waitUntilNoActiveRuns("world_live");
    } finally {
      await api.request("PATCH", "api/v2/dags/world_live", { body: { is_paused: true } });
    }
    const trigger = (await taskInstances("world_live", run.dag_run_id)).get("world_live_day");
    assert.equal(trigger?.state, "failed");
    assert.ok(trigger.child_dag_run_id, "the switch triggered world_live_day");
    const child = await taskInstances("world_live_day", trigger.child_dag_run_id);
    assert.equal(child.get("read_position")?.state, "failed");
    assert.match(child.get("read_position")?.error ?? "", /world_position is not set.*make up/);
  });
});
