// World snapshots benchmark (issue 22, make bench): on the test stand, beside the baseline measured in
// the same run (make rebuild-storage: world_recreate, the only other way back to a known world), the
// save and the restore of the 8-day world, then of a 30-day world (22 more days played), with the disk
// each snapshot holds of its own and shares with the live data. Figures are the DAG runs' own start
// and end (REST), so the CLI's polling is not counted. Run on the test stand only:
//   STAND_CONFIG=test/stand.test.yaml node --import tsx bench/snapshot-bench.ts
import { SnapshotStore, mib, snapshotDisk } from "../src/snapshots/index.ts";
import { standContext } from "../src/stand/index.ts";
import { describeRun, readPositionText, runDag, taskInstances, type FinishedRun } from "../testkit/index.ts";
import { machineLine, printTable, ratio, seconds } from "./bench-report.ts";
import { requireTestStand, withWorldLockAndRunner } from "./bench-world.ts";

const ctx = standContext(() => undefined);
const store = new SnapshotStore(ctx.config, ctx.paths);

function runSeconds(f: FinishedRun): number {
  return (Date.parse(f.run.end_date ?? "") - Date.parse(f.run.start_date ?? "")) / 1000;
}

async function timed(dagId: string, conf: Record<string, unknown>, timeoutSeconds = 900): Promise<FinishedRun> {
  console.log(`  ${dagId} ${JSON.stringify(conf)} …`);
  const f = await runDag(dagId, conf, timeoutSeconds);
  if (f.run.state !== "success") throw new Error(`${dagId} failed: ${describeRun(f)}`);
  console.log(`  ${dagId}: ${runSeconds(f).toFixed(1)} s`);
  return f;
}

async function taskSeconds(f: FinishedRun, task: string): Promise<number> {
  const ti = (await taskInstances(f.run.dag_id, f.run.dag_run_id)).get(task);
  return (Date.parse(ti?.end_date ?? "") - Date.parse(ti?.start_date ?? "")) / 1000;
}

async function saveAndRestore(name: string): Promise<{ position: string; save: FinishedRun; restore: FinishedRun; own: number; shared: number; files: number }> {
  store.remove(name);
  const position = (await readPositionText()) ?? "?";
  const save = await timed("world_snapshot", { name });
  await timed("world_next_day", { days: 1 }); // something for the restore to replace
  const restore = await timed("world_restore", { name });
  const disk = snapshotDisk(store.folder(name));
  const files = Object.values(store.readManifest(name).parts).reduce((sum, p) => sum + p.files, 0);
  return { position, save, restore, own: disk.ownBytes, shared: disk.sharedBytes, files };
}

async function main(): Promise<void> {
  requireTestStand("the snapshot bench rebuilds the world");
  await withWorldLockAndRunner(async () => {
    console.log("snapshot bench: baseline first, make rebuild-storage (world_recreate) on the test stand");
    const rebuild = await timed("world_recreate", {});
    const eight = await saveAndRestore("bench-8-days");
    let position = Number(await readPositionText());
    console.log(`snapshot bench: playing up to 30 days (from ${position})`);
    while (position < 30) {
      await timed("world_next_day", { days: Math.min(7, 30 - position) });
      position = Number(await readPositionText());
    }
    const thirty = await saveAndRestore("bench-30-days");
    const base = runSeconds(rebuild);
    const rows = [
      ["make rebuild-storage (world_recreate, baseline)", "8 (canonical)", seconds(base), "1.00x", "-", "-", "-"],
      ...[["8-day", eight, 10] as const, ["30-day", thirty, 15] as const].flatMap(([label, r, restoreTarget]) => [
        [`save, ${label} world (target ≤ 10 s)`, r.position, seconds(runSeconds(r.save)), ratio(runSeconds(r.save), base), mib(r.own), mib(r.shared), String(r.files)],
        [`restore, ${label} world (target ≤ ${restoreTarget} s)`, r.position, seconds(runSeconds(r.restore)), ratio(runSeconds(r.restore), base), "", "", ""],
      ]),
    ];
    printTable(`World snapshots beside make rebuild-storage, same run — ${machineLine()}`, ["what", "position", "run", "vs rebuild", "disk own", "disk shared", "files"], rows);
    console.log(
      `where a restore's time goes (30-day): replace_world ${(await taskSeconds(thirty.restore, "replace_world")).toFixed(1)} s (stop, files, start), ` +
        `record_schema ${(await taskSeconds(thirty.restore, "record_schema")).toFixed(1)} s, resume_ingest ${(await taskSeconds(thirty.restore, "resume_ingest")).toFixed(1)} s; ` +
        "the replace_world task log has each step's time",
    );
    store.remove("bench-8-days");
    store.remove("bench-30-days");
  });
}

await main();
