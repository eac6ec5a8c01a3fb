// `node --import tsx src/world-ops/cli.ts <command>`: the make targets that bring the world up and down.
//   up               the stand (the loader last), then the runner (pid file, health), then
//                    world_initialize through the REST API, waited for; a red run fails loudly with
//                    the task and its error
//   down             the runner, then the stand (the loader first)
//   rebuild-storage  the stand brought up, refused at once if a service still cannot serve; then
//                    world_recreate through the REST API, waited for
//   doctor           what is wrong (src/world-ops/doctor.ts) and the command for each
//   runner start|stop  only the runner service
//   smoke            services healthy, runner healthy, world DAGs loaded, world position readable
//   check-clickhouse cluster layout and per-layer counts against the passport (src/world-ops/checks.ts)
//   summary          position, rows per layer, schema drift, web view address
//   generate batch|live  one generator run against the stand (GENERATOR_DAY etc. from the environment)
//   snapshot NAME    world_snapshot through the REST API, waited for; restore NAME: world_restore
//   snapshots        the saved snapshots (name, position, taken at, disk, schema) and the last restores
//   snapshot-rm NAME removes a snapshot's files (refused while a snapshot or restore run is active)
// Shell never applies DDL or edits the position: everything about the world goes through a DAG.
import { spawn } from "node:child_process";
import path from "node:path";
import { Command } from "commander";
import type { DagResponse } from "../api/index.ts";
import { EXIT, table } from "../cli/index.ts";
import { apiBaseUrl, kafkaBroker, launchArgs, loadStandConfig, poolInstance, repoRoot } from "../config/index.ts";
import { mib, readRestores, removeSnapshot, snapshotRows } from "../snapshots/index.ts";
import { withRunnerDb, WORLD_DAG_IDS } from "../world/index.ts";
import { loadExpectations, runClickHouseChecks } from "./checks.ts";
import { ensureRunners, runnerHealthy, runnerInstances, stopRunners } from "../services/index.ts";
import { standContext, standDown, standStatus, standUp } from "../stand/index.ts";
import { apiClient, readWorldPositionText, renderWorldSummary, runWorldDag } from "./report.ts";
import { doctorFindings, rebuildRefusal } from "./doctor.ts";
import { errorMessage } from "../errors.ts";

const print = (line: string) => console.log(line);

async function up(): Promise<number> {
  const started = Date.now();
  const ctx = standContext();
  await standUp(ctx);
  await ensureRunners(ctx);
  if (!(await runWorldDag("world_initialize", "make_up", print))) {
    console.error("make up: the world is NOT ready (see above). The stand and the runner stay up.");
    return 1;
  }
  print(await renderWorldSummary(apiClient()));
  print(`make up: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

async function rebuildStorage(): Promise<number> {
  const started = Date.now();
  const ctx = standContext();
  const refusal = await rebuildRefusal(ctx);
  if (refusal !== undefined) {
    console.error(`rebuild-storage: refused after ${((Date.now() - started) / 1000).toFixed(1)} s, before touching anything:\n${refusal}`);
    return 1;
  }
  await ensureRunners(ctx);
  print("rebuild-storage: pause world_live and let step DAGs finish first; this destroys the world and creates it again");
  if (!(await runWorldDag("world_recreate", "rebuild_storage", print))) return 1;
  print(await renderWorldSummary(apiClient()));
  return 0;
}

async function doctor(): Promise<number> {
  const findings = await doctorFindings(standContext());
  if (findings.length === 0) {
    print("doctor: nothing wrong found (services serve, the keeper is current, the loader holds nothing, the world is whole, no run is stuck)");
    return 0;
  }
  for (const f of findings) print(`${f.permanent ? "STUCK" : "WRONG"} ${f.subject}: ${f.problem}\n      fix: ${f.fix}`);
  print(`doctor: ${findings.length} problem(s)`);
  return 1;
}

async function down(): Promise<number> {
  const ctx = standContext();
  await stopRunners(ctx);
  await standDown(ctx);
  return 0;
}

/** One smoke probe: is a service or the runner there and answering. ("Checks" are the world's data
 * checks: check-clickhouse's sql/checks/ and dq_check's sql/dq/checks/.) */
interface SmokeProbe {
  what: string;
  ok: boolean;
  detail: string;
}

async function probeOf(what: string, probe: () => Promise<string>): Promise<SmokeProbe> {
  try {
    return { what, ok: true, detail: await probe() };
  } catch (err) {
    return { what, ok: false, detail: errorMessage(err) };
  }
}

async function smoke(): Promise<number> {
  const client = apiClient();
  const ctx = standContext();
  const runners = runnerInstances(ctx).map((index) => poolInstance(ctx.config, "runner", index));
  const probes = [
    ...(await standStatus(ctx)).services.filter((s) => !runners.some((r) => r.name === s.name)).map((s) => ({ what: s.name, ok: s.healthy, detail: s.detail })),
    ...(await Promise.all(runners.map((r) => probeOf(r.name, async () => (await runnerHealthy(2000, ctx.config, r.index), `${apiBaseUrl(ctx.config, r.index)} healthy`))))),
    await probeOf("world DAGs", async () => {
      const { dags } = await client.request<{ dags: DagResponse[] }>("GET", "api/v2/dags", { query: { limit: 1000 } });
      const missing = WORLD_DAG_IDS.filter((id) => !dags.some((d) => d.dag_id === id));
      if (missing.length > 0) throw new Error(`not loaded: ${missing.join(", ")}`);
      return `${WORLD_DAG_IDS.length} loaded`;
    }),
    await probeOf("world position", async () => `world_position = ${(await readWorldPositionText(client)) ?? "(not set: no world yet)"}`),
  ];
  for (const p of probes) print(`${p.ok ? "ok  " : "FAIL"} ${p.what.padEnd(16)} ${p.detail}`);
  return probes.every((p) => p.ok) ? 0 : 1;
}

/** Runs the generator CLI once against the stand's broker; its flags come from GENERATOR_* variables. */
function generate(mode: string): Promise<number> {
  if (mode !== "batch" && mode !== "live") {
    console.error(`generate: mode must be batch or live, not '${mode}'`);
    return Promise.resolve(EXIT.USAGE);
  }
  const cli = path.join(repoRoot, "generator", "src", "cli.ts");
  print(`generator ${mode} → ${kafkaBroker()} (GENERATOR_DAY and the other GENERATOR_* variables apply)`);
  const child = spawn(process.execPath, launchArgs(cli, mode, "--brokers", kafkaBroker()), { stdio: "inherit", cwd: repoRoot });
  return new Promise((resolve) => child.on("close", (code) => resolve(code ?? 1)));
}

/** check-clickhouse: src/world-ops/checks.ts's comparisons (cluster layout, per-layer counts against the passport) as a table. */
async function checkClickHouse(): Promise<number> {
  const results = await runClickHouseChecks({ expectations: await loadExpectations() });
  print(table(["", "check", "actual", "expected"], results.map((r) => [r.ok ? "OK" : "RED", r.name, r.actual, r.ok ? "" : r.expected])));
  for (const r of results) if (!r.ok && r.detail) print(`RED ${r.name}: ${r.detail}`);
  const red = results.filter((r) => !r.ok).length;
  print(red === 0 ? `check-clickhouse: all ${results.length} checks green` : `check-clickhouse: ${red} of ${results.length} checks RED`);
  return red === 0 ? 0 : 1;
}

async function snapshot(name: string): Promise<number> {
  await ensureRunners(standContext());
  return (await runWorldDag("world_snapshot", `snapshot_${name}`, print, { name })) ? 0 : 1;
}

async function restore(name: string): Promise<number> {
  await ensureRunners(standContext());
  if (!(await runWorldDag("world_restore", `restore_${name}`, print, { name }))) return 1;
  print(await renderWorldSummary(apiClient()));
  return 0;
}

async function listSnapshots(): Promise<number> {
  const config = loadStandConfig();
  const rows = await snapshotRows(config);
  if (rows.length === 0) print("no snapshots yet: make snapshot NAME=… saves the world");
  else {
    print(
      table(
        ["name", "state", "position", "taken at", "disk (own)", "shared", "schema"],
        rows.map((r) => [r.name, r.state, r.position ?? "", r.takenAt ?? "", mib(r.ownBytes), mib(r.sharedBytes), r.schema === null ? "" : `${r.schema}${r.schemaIsToday ? " (sql/ddl today)" : " (OTHER)"}`]),
      ),
    );
    for (const r of rows) if (r.problem) print(`${r.name}: ${r.problem}`);
  }
  try {
    const restores = await withRunnerDb((db) => readRestores(db, 5), "snapshots-list");
    for (const r of restores) print(`restored '${r.snapshot}' (position ${r.toPosition}) at ${r.restoredAt ?? "?"} over position ${r.fromPosition ?? "unset"}: ${r.dagId}/${r.runId}`);
  } catch (err) {
    print(`(the restores could not be read from Postgres: ${errorMessage(err)})`);
  }
  return 0;
}

async function activeSnapshotRuns(): Promise<string[]> {
  const client = apiClient();
  const active: string[] = [];
  for (const dagId of ["world_snapshot", "world_restore"]) {
    for (const state of ["queued", "running"]) {
      const page = await client.request<{ dag_runs: { dag_run_id: string }[] }>("GET", `api/v2/dags/${dagId}/dagRuns`, { query: { state, limit: 10 } });
      for (const run of page.dag_runs) active.push(`${dagId}/${run.dag_run_id} (${state})`);
    }
  }
  return active;
}

async function snapshotRm(name: string): Promise<number> {
  const folder = await removeSnapshot(loadStandConfig(), name, activeSnapshotRuns);
  print(`removed snapshot '${name}' (${folder})`);
  return 0;
}

function exitWith(work: () => Promise<number>): () => Promise<void> {
  return async () => {
    try {
      process.exitCode = await work();
    } catch (err) {
      console.error(`\n${errorMessage(err)}`);
      process.exitCode = 1;
    }
  };
}

const program = new Command().name("up").description("the world's make targets: up, down, rebuild-storage, smoke");
program.command("up").description("stand, runner, world_initialize (waited for), summary").action(exitWith(up));
program.command("down").description("stop the runner, then the stand (the loader first)").action(exitWith(down));
program.command("rebuild-storage").description("world_recreate (waited for), summary").action(exitWith(rebuildStorage));
program.command("doctor").description("what is wrong (services, keeper, loader, world position, stuck runs) and the command for each; exit 1 when anything is").action(exitWith(doctor));
program.command("smoke").description("services, runner, DAGs, world position").action(exitWith(smoke));
program.command("check-clickhouse").description("cluster layout and per-layer counts against the passport; exit 1 on a red check").action(exitWith(checkClickHouse));
program.command("summary").description("world position, rows per layer, schema drift").action(exitWith(async () => (print(await renderWorldSummary(apiClient())), 0)));
const runner = program.command("runner").description("the runner service alone");
runner.command("start").description("start (or restart on changed code) and wait for health").action(exitWith(async () => (await ensureRunners(standContext()), 0)));
runner.command("stop").description("stop it (SIGTERM, then SIGKILL after 30 s)").action(exitWith(async () => (await stopRunners(standContext()), 0)));
program.command("snapshot <name>").description("world_snapshot (waited for): save the world under NAME").action((name: string) => exitWith(() => snapshot(name))());
program.command("restore <name>").description("world_restore (waited for): put the world saved as NAME back, then the summary").action((name: string) => exitWith(() => restore(name))());
program.command("snapshots").description("the saved snapshots and the last restores").action(exitWith(listSnapshots));
program.command("snapshot-rm <name>").description("remove a snapshot's files").action((name: string) => exitWith(() => snapshotRm(name))());
program.command("generate <mode>").description("one generator run (batch or live) against the stand").action((mode: string) => exitWith(() => generate(mode))());

await program.parseAsync();
