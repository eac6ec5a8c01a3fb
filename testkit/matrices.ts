// Every fault and rerun matrix of the suite, in one place: its points, what a point costs on the
// test stand (measured: docs/stand.md "Tests apart" has the figures) and its share of the gate's 10
// minutes. The test files draw their samples from these (testkit/matrix.ts); test/structure/
// matrix-sample.test.ts proves that consecutive seeds draw every point of each.
import { dags } from "../dags/index.ts";
import type { Dag } from "../src/runner/index.ts";
import { byIds, type Matrix } from "./matrix.ts";
import type { PauseBoundary } from "./runner/runner-pauses.ts";

/** Every task boundary of a step, in the order a run reaches them: before and after each callable
 * task of world_next_day and of the child runs it waits for (dq_check's parallel checks aside). */
export const STEP_BOUNDARIES: readonly PauseBoundary[] = [
  ["world_next_day", "read_position"],
  ["world_next_day", "build_generator"],
  ["world_next_day", "play_days"],
  ["world_next_day", "wait_for_hits"],
  ["world_next_day", "send_order_snapshots"],
  ["orders_ingest", "pull_batch"],
  ["orders_ingest", "parse_batch"],
  ["world_next_day", "set_position"],
  ["dds_transform", "build_dds"],
  ["dm_transform", "build_dm"],
  ["dq_check", "measure"],
].flatMap(([dag = "", task = ""]) => (["before", "after"] as const).map((phase) => ({ dag, task, phase })));

const boundaryId = (b: PauseBoundary): string => `${b.dag}.${b.task}.${b.phase}`;

/** Postgres stopped and started at task boundaries of one step (test/faults/step-faults.test.ts). */
export const POSTGRES_AT_BOUNDARIES = (["restarted", "killed"] as const).map(
  (kind): Matrix<PauseBoundary> => ({
    name: `step-faults.postgres-${kind}`,
    file: "test/faults/step-faults.test.ts",
    points: STEP_BOUNDARIES,
    id: boundaryId,
    secondsPerPoint: 4,
    gateSeconds: 8,
  }),
);

/** The single faults of a step and of a creation (test/faults/step-faults.test.ts), each its own test. */
export const STEP_FAULT_KINDS: Matrix<string> = {
  name: "step-faults.kind",
  file: "test/faults/step-faults.test.ts",
  points: ["runner-sigkill", "clickhouse-frozen", "kafka-stopped", "rebuild-during-live-day", "creation-stopped"],
  id: (p) => p,
  secondsPerPoint: 36,
  gateSeconds: 36,
};

/** The keeper's faults made for real (test/faults/keeper-faults.test.ts), each its own test. */
export const KEEPER_FAULTS: Matrix<string> = {
  name: "keeper-faults.fault",
  file: "test/faults/keeper-faults.test.ts",
  points: ["frozen-zookeeper", "smart-shutdown", "kill-9", "crash-loop", "keeper-killed", "stopped-on-purpose"],
  id: (p) => p,
  secondsPerPoint: 16,
  gateSeconds: 16,
};

/** airflowctl 0.1.5's command groups (test/clients/airflowctl-commands.ts, in the breadth file), each its own test. */
export const AIRFLOWCTL_GROUPS: Matrix<string> = {
  name: "airflowctl.group",
  file: "test/clients/airflow-client-breadth.test.ts",
  points: ["dags-runs-jobs", "xcom", "connections-variables-pools", "backfills", "config", "known-bugs"],
  id: (p) => p,
  // each command is a Python process: the two largest groups took 35-38 s in a full gate
  secondsPerPoint: 18,
  gateSeconds: 18,
};

/** The two ends of the world's lifecycle story (test/lifecycle/world.test.ts) that each rebuild a
 * world: the interrupted cleanup that leaves -1 (with the refusals after it), and make
 * rebuild-storage from a played world. The cold make up between them runs in every tier. */
export const WORLD_LIFECYCLE_ENDS: Matrix<string> = {
  name: "lifecycle.end",
  file: "test/lifecycle/world.test.ts",
  points: ["interrupted-cleanup", "rebuild-storage"],
  id: (p) => p,
  secondsPerPoint: 30,
  gateSeconds: 30,
};

/** The snapshot scenarios beside the save/restore round trip (test/snapshots/world-snapshots.test.ts). */
export const SNAPSHOT_SCENARIOS: Matrix<string> = {
  name: "snapshots.scenario",
  file: "test/snapshots/world-snapshots.test.ts",
  points: ["restore-queued", "refusals", "restore-killed", "save-killed", "stand-restarted"],
  id: (p) => p,
  secondsPerPoint: 28,
  gateSeconds: 28,
};

/** Takeovers across a pool of two runners (test/pool/second-host-runner.test.ts). */
export const SECOND_HOST_FAULTS: Matrix<string> = {
  name: "second-host.fault",
  file: "test/pool/second-host-runner.test.ts",
  points: ["kill-holder", "sigstop-holder", "kill-world-task"],
  id: (p) => p,
  secondsPerPoint: 15,
  gateSeconds: 15,
};

/** A group of two loaders under faults while a day streams in (test/pool/loader-group.test.ts). */
export const LOADER_GROUP_FAULTS: Matrix<string> = {
  name: "loader-group.fault",
  file: "test/pool/loader-group.test.ts",
  points: ["kill-uncommitted", "remove-add"],
  id: (p) => p,
  secondsPerPoint: 20,
  gateSeconds: 20,
};

/** Services killed with -9 in turn while a day streams in, the keeper on (test/faults/keeper-faults.test.ts). */
export const KEEPER_KILLS: Matrix<string> = {
  name: "keeper-faults.kill-9",
  file: "test/faults/keeper-faults.test.ts",
  points: ["postgres", "zookeeper", "clickhouse-ch1", "clickhouse-ch2", "kafka", "prometheus", "runner", "loader"],
  id: (p) => p,
  secondsPerPoint: 8,
  gateSeconds: 8,
};

/** The loader's faults while a day plays (test/faults/loader-faults.test.ts), each its own test. */
export const LOADER_FAULT_KINDS: Matrix<string> = {
  name: "loader-faults.kind",
  file: "test/faults/loader-faults.test.ts",
  points: ["poison", "clickhouse-frozen", "loader-sigkill", "clickhouse-killed", "loader-frozen"],
  id: (p) => p,
  secondsPerPoint: 22,
  gateSeconds: 22,
};

/** The world DAGs a rerun step runs, in order (test/faults/reruns-converge.test.ts). */
export const RERUN_STEPS = ["world_recreate", "world_next_day", "world_live_day"] as const;

/** The DAGs a step runs: itself and what its waiting triggers run, transitively. */
export function dagFamily(dagId: string): Dag[] {
  const byId = new Map(dags.map((d) => [d.id, d]));
  const seen = new Map<string, Dag>();
  const visit = (id: string): void => {
    const dag = byId.get(id);
    if (!dag || seen.has(id)) return;
    seen.set(id, dag);
    for (const task of dag.tasks.values()) if (task.kind === "waitingTrigger") visit(task.triggerDagId);
  };
  visit(dagId);
  return [...seen.values()];
}

export interface RerunPoint {
  step: (typeof RERUN_STEPS)[number];
  dag: string;
  task: string;
}

/** Every task with a function of every step's family, failing once after its work. */
export const RERUN_FAIL_POINTS: Matrix<RerunPoint> = {
  name: "reruns.fail-after",
  file: "test/faults/reruns-converge.test.ts",
  points: RERUN_STEPS.flatMap((step) =>
    dagFamily(step).flatMap((dag) => [...dag.tasks.values()].filter((t) => t.kind !== "waitingTrigger").map((t) => ({ step, dag: dag.id, task: t.id }))),
  ),
  id: (p) => `${p.step}:${p.dag}.${p.task}`,
  secondsPerPoint: 3,
  gateSeconds: 15,
};

/** Every matrix of the suite, as its point ids (a seed draws the same ids either way). */
export const SUITE_MATRICES: readonly Matrix<string>[] = [
  ...POSTGRES_AT_BOUNDARIES.map(byIds),
  byIds(STEP_FAULT_KINDS),
  byIds(KEEPER_FAULTS),
  byIds(AIRFLOWCTL_GROUPS),
  byIds(WORLD_LIFECYCLE_ENDS),
  byIds(SNAPSHOT_SCENARIOS),
  byIds(SECOND_HOST_FAULTS),
  byIds(LOADER_GROUP_FAULTS),
  byIds(KEEPER_KILLS),
  byIds(LOADER_FAULT_KINDS),
  byIds(RERUN_FAIL_POINTS),
];
