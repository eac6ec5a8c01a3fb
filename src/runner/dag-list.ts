// What Airflow's DAG list filters and sorts by that is not on the DAG itself: each DAG's latest run
// (its state and start, for last_dag_run_state and the state/start_date sort keys) and the DAGs that
// have a run in a window or state (dag_run_start_date_*, dag_run_end_date_*, dag_run_state).
import type pg from "pg";
import { type Range, Where } from "./list-sql.ts";
import type { RunState } from "./types.ts";

export interface LatestRunFact {
  state: RunState;
  startDate: Date | null;
}

export interface DagRunFilter {
  startDate?: Range<Date>;
  endDate?: Range<Date>;
  states?: readonly string[];
}

export interface DagListFacts {
  latest: Map<string, LatestRunFact>;
  /** The DAGs with a run the filter keeps; null when no filter was asked. */
  withMatchingRun: Set<string> | null;
}

export async function readDagListFacts(pool: pg.Pool, filter: DagRunFilter | null): Promise<DagListFacts> {
  const latest = await pool.query<{ dag_id: string; state: RunState; start_date: Date | null }>(
    "select distinct on (dag_id) dag_id, state, start_date from runner.dag_runs order by dag_id, queued_at desc, id desc",
  );
  const facts: DagListFacts = { latest: new Map(latest.rows.map((r) => [r.dag_id, { state: r.state, startDate: r.start_date }])), withMatchingRun: null };
  if (filter === null) return facts;
  const w = new Where().range("start_date", filter.startDate).range("end_date", filter.endDate).anyOf("state", filter.states, "text");
  const { rows } = await pool.query<{ dag_id: string }>(`select distinct dag_id from runner.dag_runs where ${w.toString()}`, w.values);
  facts.withMatchingRun = new Set(rows.map((r) => r.dag_id));
  return facts;
}
