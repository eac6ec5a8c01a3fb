// Prometheus metrics of one runner, in its own registry (not prom-client's global one, so
// several runners in one process, as in tests, do not collide). The API serves `registry`.
import type pg from "pg";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { RUN_STATES } from "./types.ts";

export interface RunnerMetrics {
  registry: Registry;
  taskDuration: Histogram<"dag_id" | "state">;
  handoff: Histogram;
  resume: Histogram;
  takeovers: Counter;
  refusedResults: Counter;
  queueRestarts: Counter;
}

const FAST_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5];

export function createMetrics(pool: pg.Pool): RunnerMetrics {
  const registry = new Registry();
  new Gauge({
    name: "runner_dag_runs",
    help: "DAG runs by state",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ state: string; n: number }>(
        "select state, count(*)::integer as n from runner.dag_runs group by state",
      );
      for (const state of RUN_STATES) this.set({ state }, rows.find((r) => r.state === state)?.n ?? 0);
    },
  });
  new Gauge({
    name: "runner_dag_latest_run_failed",
    help: "1 while the newest run of the DAG (by queue time) ended failed, else 0; one series per DAG that has run",
    labelNames: ["dag_id"],
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ dag_id: string; failed: boolean }>(
        "select distinct on (dag_id) dag_id, state = 'failed' as failed from runner.dag_runs order by dag_id, queued_at desc, id desc",
      );
      this.reset();
      for (const row of rows) this.set({ dag_id: row.dag_id }, row.failed ? 1 : 0);
    },
  });
  return {
    registry,
    taskDuration: new Histogram({
      name: "runner_task_duration_seconds",
      help: "Duration of task tries, by DAG and final state of the try",
      labelNames: ["dag_id", "state"],
      buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers: [registry],
    }),
    handoff: new Histogram({
      name: "runner_task_handoff_seconds",
      help: "From a task being queued (its upstream's success committed) to its try starting",
      buckets: FAST_BUCKETS,
      registers: [registry],
    }),
    resume: new Histogram({
      name: "runner_waiting_trigger_resume_seconds",
      help: "From a child run ending to its waiting trigger being resumed",
      buckets: FAST_BUCKETS,
      registers: [registry],
    }),
    takeovers: new Counter({
      name: "runner_lease_takeovers_total",
      help: "Tries taken over after their lease lapsed",
      registers: [registry],
    }),
    refusedResults: new Counter({
      name: "runner_late_results_refused_total",
      help: "Results refused because the try no longer held its task",
      registers: [registry],
    }),
    queueRestarts: new Counter({
      name: "runner_job_queue_restarts_total",
      help: "Times graphile-worker's pool shut itself down under a running runner and was started again",
      registers: [registry],
    }),
  };
}
