// Runner benchmark (not a test): task-to-task handoff over a chain, fan-out throughput, and
// waiting-trigger resume latency, each beside raw graphile-worker doing the same work in the
// same process and database; then handoff and fan-out with a pool of two runners on that database
// (two engines, each with its own connections, workers and scheduler, in this process so one clock
// times both) beside the lone runner: what the pool's coordination costs (issue 25: no more than
// 10 % below the lone runner). Run: node --import tsx bench/runner-bench.ts
// It creates and drops its own database (runner_bench_<random>) on the stand's Postgres.
import { Logger as GraphileLogger, type JobHelpers, type Runner as GraphileRunner, run as runGraphile } from "graphile-worker";
import pg from "pg";
import { pino } from "pino";
import { defineDag, type Runner, createRunner } from "../src/runner/index.ts";
import { withBenchDatabase } from "./bench-database.ts";

const CHAIN_LENGTH = 50;
const CHAIN_RUNS = 6;
const FAN_OUT = 1000;
/** Fan-out rounds after one warm-up round; the median is reported (the machine may be shared). */
const FAN_OUT_ROUNDS = 3;
const RESUME_RUNS = 20;
const CONCURRENCY = 10;

const marks = new Map<string, { start: number; end: number }>();
const mark = (key: string, at: "start" | "end") => {
  const entry = marks.get(key) ?? { start: 0, end: 0 };
  entry[at] = performance.now();
  marks.set(key, entry);
};
const noop = (key: (runId: string, taskId: string) => string) => (ctx: { runId: string; taskId: string }) => {
  const k = key(ctx.runId, ctx.taskId);
  mark(k, "start");
  mark(k, "end");
};

function buildDags() {
  let chain = defineDag({ id: "bench_chain", maxActiveRuns: 1 });
  for (let i = 0; i < CHAIN_LENGTH; i++) {
    chain = chain.task(`t${i}`, i === 0 ? {} : { upstream: [`t${i - 1}`] }, noop((r, t) => `${r}/${t}`));
  }
  let fan = defineDag({ id: "bench_fan_out" }).task("root", noop((r, t) => `${r}/${t}`));
  for (let i = 0; i < FAN_OUT; i++) fan = fan.task(`leaf${i}`, { upstream: ["root"] }, noop((r, t) => `${r}/${t}`));
  const child = defineDag({ id: "bench_child", maxActiveRuns: 100 }).task("only", () => undefined);
  const parent = defineDag({ id: "bench_parent", maxActiveRuns: 1 }).waitingTrigger("wait", { triggerDagId: "bench_child" });
  return [chain.build(), fan.build(), child.build(), parent.build()];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? NaN;
}

async function engineHandoff(runner: Runner): Promise<number[]> {
  const samples: number[] = [];
  for (let r = 0; r < CHAIN_RUNS; r++) {
    const run = await runner.triggerRun("bench_chain", { triggeredBy: "bench" });
    const done = await runner.waitForRun("bench_chain", run.runId, { timeoutMs: 60_000 });
    if (done.state !== "success") throw new Error(`chain run ended ${done.state}`);
    if (r === 0) continue; // warm-up: connections and prepared statements
    for (let i = 1; i < CHAIN_LENGTH; i++) {
      const prev = marks.get(`${run.runId}/t${i - 1}`);
      const next = marks.get(`${run.runId}/t${i}`);
      if (prev && next) samples.push(next.start - prev.end);
    }
  }
  return samples.sort((a, b) => a - b);
}

async function engineFanOutOnce(runner: Runner): Promise<number> {
  const run = await runner.triggerRun("bench_fan_out", { triggeredBy: "bench" });
  const done = await runner.waitForRun("bench_fan_out", run.runId, { timeoutMs: 120_000 });
  if (done.state !== "success") throw new Error(`fan-out run ended ${done.state}`);
  const root = marks.get(`${run.runId}/root`);
  let last = 0;
  for (let i = 0; i < FAN_OUT; i++) last = Math.max(last, marks.get(`${run.runId}/leaf${i}`)?.end ?? 0);
  return FAN_OUT / ((last - (root?.end ?? 0)) / 1000);
}

async function medianOfRounds(round: () => Promise<number>): Promise<number> {
  await round(); // warm-up
  const results: number[] = [];
  for (let i = 0; i < FAN_OUT_ROUNDS; i++) results.push(await round());
  return percentile(results.sort((a, b) => a - b), 50);
}

async function engineResume(runner: Runner, pool: pg.Pool): Promise<number[]> {
  const samples: number[] = [];
  for (let r = 0; r < RESUME_RUNS + 1; r++) {
    const run = await runner.triggerRun("bench_parent", { triggeredBy: "bench" });
    const done = await runner.waitForRun("bench_parent", run.runId, { timeoutMs: 30_000 });
    if (done.state !== "success") throw new Error(`parent run ended ${done.state}`);
    if (r === 0) continue;
    // both ends by the database clock: the child run's end, the parent task's resumed end
    const { rows } = await pool.query<{ ms: number }>(
      `select extract(epoch from ti.end_date - c.end_date)::float8 * 1000 as ms
         from runner.task_instances ti join runner.dag_runs p on p.id = ti.run_pk
         join runner.dag_runs c on c.id = ti.child_run_pk
        where p.dag_id = 'bench_parent' and p.run_id = $1`,
      [run.runId],
    );
    if (rows[0]) samples.push(rows[0].ms);
  }
  return samples.sort((a, b) => a - b);
}

async function rawGraphile(url: string): Promise<{ handoff: number[]; throughput: number }> {
  const ends = new Map<number, number>();
  const starts = new Map<number, number>();
  let chainDone: () => void = () => undefined;
  let fanLeft = FAN_OUT;
  let fanDone: () => void = () => undefined;
  const chainTotal = CHAIN_LENGTH * CHAIN_RUNS;
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY * 2 + 4 });
  pool.on("connect", (client) => client.on("error", () => undefined));
  pool.on("error", () => undefined);
  const runner: GraphileRunner = await runGraphile({
    pgPool: pool,
    concurrency: CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2000,
    logger: silentGraphileLogger(),
    taskList: {
      raw_chain: async (payload, helpers: JobHelpers) => {
        const i = (payload as { i: number }).i;
        starts.set(i, performance.now());
        if (i + 1 >= chainTotal) return chainDone();
        ends.set(i, performance.now());
        await helpers.addJob("raw_chain", { i: i + 1 });
      },
      raw_noop: () => {
        if (--fanLeft === 0) fanDone();
      },
    },
  });
  try {
    await new Promise<void>((resolve) => {
      chainDone = resolve;
      void runner.addJob("raw_chain", { i: 0 });
    });
    const handoff: number[] = [];
    for (let i = CHAIN_LENGTH; i + 1 < chainTotal; i++) {
      const end = ends.get(i);
      const start = starts.get(i + 1);
      if (end !== undefined && start !== undefined) handoff.push(start - end);
    }
    const fanOutOnce = async () => {
      fanLeft = FAN_OUT;
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        fanDone = resolve;
        const specs = Array.from({ length: FAN_OUT }, () => ({ identifier: "raw_noop", payload: {} }));
        void pool.query(
          "select graphile_worker.add_jobs(array(select json_populate_recordset(null::graphile_worker.job_spec, $1::json)))",
          [JSON.stringify(specs)],
        );
      });
      return FAN_OUT / ((performance.now() - t0) / 1000);
    };
    const throughput = await medianOfRounds(fanOutOnce);
    return { handoff: handoff.sort((a, b) => a - b), throughput };
  } finally {
    await runner.stop();
    await pool.end();
  }
}

function silentGraphileLogger(): GraphileLogger {
  return new GraphileLogger(() => () => undefined);
}


const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

type Row = [string, string, string, string, string];

function printTable(rows: Row[], header: Row = ["measure", "runner", "raw graphile", "ratio", "target"]): void {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<void> {
  await withBenchDatabase("runner_bench", async (url) => {
    const runner = createRunner({
      pgUrl: url,
      dags: buildDags(),
      concurrency: CONCURRENCY,
      leaseSeconds: 30,
      logger: pino({ level: "warn" }),
    });
    await runner.start();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    let handoff: number[], throughput: number, resume: number[];
    try {
      handoff = await engineHandoff(runner);
      throughput = await medianOfRounds(() => engineFanOutOnce(runner));
      resume = await engineResume(runner, pool);
    } finally {
      await pool.end();
      await runner.stop();
    }
    // a pool of two fresh engines on the same database (a stopped engine does not start again)
    const pooled = [0, 1].map(() => createRunner({ pgUrl: url, dags: buildDags(), concurrency: CONCURRENCY, leaseSeconds: 30, logger: pino({ level: "warn" }) }));
    let poolHandoff: number[], poolThroughput: number;
    for (const engine of pooled) await engine.start(); // one at a time: the second finds the migrations applied
    try {
      const [first] = pooled as [Runner, Runner];
      poolHandoff = await engineHandoff(first);
      poolThroughput = await medianOfRounds(() => engineFanOutOnce(first));
    } finally {
      await Promise.all(pooled.map((r) => r.stop()));
    }
    const raw = await rawGraphile(url);
    const h50 = percentile(handoff, 50);
    const h99 = percentile(handoff, 99);
    const r50 = percentile(raw.handoff, 50);
    const r99 = percentile(raw.handoff, 99);
    const rs50 = percentile(resume, 50);
    const rs99 = percentile(resume, 99);
    console.log(`runner bench: ${CHAIN_LENGTH}-task chain x ${CHAIN_RUNS - 1} runs, ${FAN_OUT}-task fan-out (median of ${FAN_OUT_ROUNDS}), ` +
      `${RESUME_RUNS} waiting-trigger resumes; concurrency ${CONCURRENCY}\n`);
    printTable([
      ["handoff p50 (ms)", fmt(h50), fmt(r50), `${fmt(h50 / r50, 1)}x`, "<= 5 ms, <= 3x raw"],
      ["handoff p99 (ms)", fmt(h99), fmt(r99), `${fmt(h99 / r99, 1)}x`, "<= 20 ms, <= 3x raw"],
      ["fan-out (tasks/s)", fmt(throughput, 0), fmt(raw.throughput, 0), `${fmt(throughput / raw.throughput, 2)}x`, ">= 1000 tasks/s"],
      ["resume p50 (ms)", fmt(rs50), fmt(r50), `${fmt(rs50 / r50, 1)}x`, "<= 20 ms"],
      ["resume p99 (ms)", fmt(rs99), fmt(r99), `${fmt(rs99 / r99, 1)}x`, "-"],
    ]);
    console.log("\nraw graphile: a job that adds the next job (handoff), 1000 no-op jobs added at once (fan-out);");
    console.log("resume is compared with the raw handoff, its nearest raw equivalent (one job enqueuing the next).");
    const p50 = percentile(poolHandoff, 50);
    const p99 = percentile(poolHandoff, 99);
    console.log(`\na pool of 2 runners on one database (the same chain and fan-out; the tasks run on either), beside the lone runner of this run:\n`);
    printTable([
      ["handoff p50 (ms)", fmt(p50), fmt(h50), `${fmt(p50 / h50, 2)}x`, "<= 1.1x (10 % slower at most)"],
      ["handoff p99 (ms)", fmt(p99), fmt(h99), `${fmt(p99 / h99, 2)}x`, "-"],
      ["fan-out (tasks/s)", fmt(poolThroughput, 0), fmt(throughput, 0), `${fmt(poolThroughput / throughput, 2)}x`, ">= 0.9x"],
    ], ["measure", "2 runners", "1 runner", "ratio", "target"]);
  });
}

await main();
