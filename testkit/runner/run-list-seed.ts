// A run list built for Airflow's list filters and sort keys (test/api/run-lists.test.ts and the
// official client's breadth test): 36 runs over three DAGs with known states, dates, durations,
// conf and triggering users, written through the engine and then given their dates in SQL, beside
// two DAGs without runs (one unpaused, one stale). readRunList reads every row back as the database
// holds it, times in microseconds, for the model (run-list-model.ts) to compute each answer from.
import { defineDag, type Dag, type Runner } from "../../src/runner/index.ts";
import { withClient, type TestDatabase } from "./runner-db.ts";

export const T0 = Date.parse("2026-03-01T00:00:00Z");
export const HOUR = 3_600_000;
export const RUN_STATES_SEEDED = ["success", "failed", "running", "queued"] as const;
export const USERS = ["alice", "bob", null] as const;

/** Airflow's timetable class of each DAG, as the DAG below is defined. */
export const TIMETABLES: Record<string, string> = {
  list_a: "NullTimetable",
  list_b: "CronTriggerTimetable",
  list_c: "DeltaTriggerTimetable",
  list_d: "NullTimetable",
  list_e: "NullTimetable",
};
/** list_c's file does not import (an import error row names it): its DAG has_import_errors. */
export const BROKEN_FILE = "testkit/runner/run-list-c.ts";
export const STALE_DAG = "list_e";

function listDag(id: string, options: { schedule?: string | { everySeconds: number }; paused: boolean; fileloc?: string }): Dag {
  return defineDag({ id, description: "a run list", fileloc: options.fileloc ?? "testkit/runner/run-list-seed.ts", schedule: options.schedule, isPausedUponCreation: options.paused })
    .task("first", () => undefined)
    .task("second", { upstream: ["first"] }, () => undefined)
    .build();
}

/** The DAGs with runs start paused (their queued runs stay queued, no schedule fires). */
export const RUN_LIST_DAGS: Dag[] = [
  listDag("list_a", { paused: true }),
  listDag("list_b", { schedule: "0 * * * *", paused: true }),
  listDag("list_c", { schedule: { everySeconds: 3600 }, paused: true, fileloc: BROKEN_FILE }),
  listDag("list_d", { paused: false }),
  listDag("list_e", { paused: false }),
];
export const DAGS_WITH_RUNS = ["list_a", "list_b", "list_c"];

export interface SeededRunList {
  /** Before every run's updated_at. */
  updatedBefore: Date;
  /** After the first update, before the one that made run_00 and run_13 their DAG's latest. */
  latestMovedAfter: Date;
}

/** Writes the 36 runs and their task instances, then moves run_00 (success) and run_13 (failed)
 * last in their DAGs (list_a, list_b), so each DAG's latest run differs (list_c's is queued). */
export async function seedRunList(runner: Runner, db: TestDatabase): Promise<SeededRunList> {
  let i = 0;
  for (const dagId of DAGS_WITH_RUNS) {
    for (let k = 0; k < 12; k += 1, i += 1) {
      const who = USERS[i % USERS.length] ?? null;
      await runner.triggerRun(dagId, {
        runId: `run_${String(i).padStart(2, "0")}`,
        logicalDate: i % 5 === 0 ? null : new Date(T0 + i * HOUR),
        conf: { tag: `t${i % 4}`, n: i },
        triggeredBy: who === null ? "scheduler" : `rest_api:user:${who}`,
      });
    }
  }
  const updatedBefore = new Date();
  let latestMovedAfter = updatedBefore;
  // states and dates as a list to filter: queued ones never started, running ones have no end
  await withClient(db, async (client) => {
    await client.query(
      `update runner.dag_runs r set
         state = (array['success','failed','running','queued'])[1 + (x.n % 4)],
         queued_at = $1::timestamptz + make_interval(mins => x.n * 7),
         start_date = case when x.n % 4 = 3 then null else $1::timestamptz + make_interval(mins => x.n * 7 + 1) end,
         end_date = case when x.n % 4 in (2, 3) then null else $1::timestamptz + make_interval(mins => x.n * 7 + 1, secs => (x.n * 37) % 300) end
       from (select id, (conf ->> 'n')::integer as n from runner.dag_runs) x where x.id = r.id`,
      [new Date(T0).toISOString()],
    );
    await client.query(`
      update runner.task_instances ti set
        state = case when r.state = 'queued' then 'scheduled' when ti.task_id = 'first' then 'success' else r.state end,
        try_number = case when r.state = 'queued' then 0 else 1 + (r.id % 2) end,
        start_date = r.start_date, end_date = case when r.end_date is null then null else r.end_date - interval '1 second' * (ti.id % 3) end
      from runner.dag_runs r where r.id = ti.run_pk`);
    latestMovedAfter = new Date();
    await client.query("update runner.dag_runs set queued_at = $1::timestamptz + make_interval(mins => 1000 + (conf ->> 'n')::integer) where run_id in ('run_00', 'run_13')", [
      new Date(T0).toISOString(),
    ]);
    await client.query("insert into runner.import_errors (filename, stack_trace) values ($1, 'Error: half-written')", [BROKEN_FILE]);
    await client.query("update runner.dags set is_stale = true where dag_id = $1", [STALE_DAG]);
  });
  return { updatedBefore, latestMovedAfter };
}

/** A run as the database holds it; times in microseconds since the epoch (null when unset). */
export interface RunRow {
  id: number;
  dag_id: string;
  run_id: string;
  state: string;
  run_type: string;
  triggered_by: string;
  conf: string;
  version_number: number | null;
  queued_at: number;
  logical_date: number | null;
  start_date: number | null;
  end_date: number | null;
  updated_at: number;
}

/** A task instance with what its lists read of its run; times in microseconds. */
export interface TaskInstanceRow {
  id: number;
  run_pk: number;
  dag_id: string;
  run_id: string;
  task_id: string;
  position: number;
  state: string;
  try_number: number;
  version_number: number | null;
  run_after: number;
  logical_date: number | null;
  start_date: number | null;
  end_date: number | null;
  updated_at: number | null;
}

export interface DagRow {
  dag_id: string;
  is_paused: boolean;
  is_stale: boolean;
  has_import_errors: boolean;
  bundle_name: string;
}

export interface RunListData {
  runs: RunRow[];
  taskInstances: TaskInstanceRow[];
  dags: DagRow[];
}

const micros = (expr: string, as: string) => `(extract(epoch from ${expr}) * 1000000)::bigint::text as ${as}`;

function numbers<T>(row: Record<string, unknown>, keys: readonly string[]): T {
  const out: Record<string, unknown> = { ...row };
  for (const key of keys) out[key] = row[key] === null ? null : Number(row[key]);
  return out as T;
}

export async function readRunList(db: TestDatabase): Promise<RunListData> {
  return withClient(db, async (client) => {
    const runs = await client.query(`
      select r.id::text, r.dag_id, r.run_id, r.state, r.run_type, r.triggered_by, r.conf::text as conf, v.version_number,
             ${micros("r.queued_at", "queued_at")}, ${micros("r.logical_date", "logical_date")}, ${micros("r.start_date", "start_date")},
             ${micros("r.end_date", "end_date")}, ${micros("r.updated_at", "updated_at")}
        from runner.dag_runs r left join runner.dag_versions v on v.id = r.dag_version_id order by r.id`);
    const tis = await client.query(`
      select ti.id::text, r.id::text as run_pk, r.dag_id, r.run_id, ti.task_id, array_position(r.manifest, ti.task_id) as position, ti.state, ti.try_number,
             v.version_number, ${micros("r.queued_at", "run_after")}, ${micros("r.logical_date", "logical_date")},
             ${micros("ti.start_date", "start_date")}, ${micros("ti.end_date", "end_date")},
             ${micros("greatest(ti.queued_at, ti.start_date, ti.end_date)", "updated_at")}
        from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk left join runner.dag_versions v on v.id = r.dag_version_id order by ti.id`);
    const dags = await client.query<DagRow>(`
      select d.dag_id, d.is_paused, d.is_stale, exists (select 1 from runner.import_errors e where e.filename = d.fileloc) as has_import_errors, v.bundle_name
        from runner.dags d join runner.dag_versions v on v.id = d.latest_version_id order by d.dag_id`);
    return {
      runs: runs.rows.map((row: Record<string, unknown>) => numbers<RunRow>(row, ["id", "queued_at", "logical_date", "start_date", "end_date", "updated_at"])),
      taskInstances: tis.rows.map((row: Record<string, unknown>) =>
        numbers<TaskInstanceRow>(row, ["id", "run_pk", "run_after", "logical_date", "start_date", "end_date", "updated_at"]),
      ),
      dags: dags.rows,
    };
  });
}

/** Microseconds since the epoch of a date (the unit of the rows above). */
export const micro = (date: Date | number): number => (typeof date === "number" ? date : date.getTime()) * 1000;
