// How soon a DAG file dropped in (or changed in) a DAG folder is served, by a running runner's DAG
// processor (the watcher, a warm parse worker), beside the way a file was picked up before it: a
// runner started again, serving the folder once it has parsed it. Target (issue 35): a new or
// changed file served within 2 s. A runner on a folder and a database of the bench's own.
//   node --import tsx bench/dag-folder-bench.ts
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createMigratedTestDatabase, dagFile, startFolderMember, stopFolderMember, until } from "../testkit/index.ts";
import { machineLine, median, printTable, ratio, seconds } from "./bench-report.ts";

const SAMPLES = 10;
const TARGET_S = 2;

const db = await createMigratedTestDatabase();
const dir = await mkdtemp(path.join(os.tmpdir(), "dag-folder-bench-"));
try {
  for (let i = 0; i < 5; i++) await writeFile(path.join(dir, `steady_${i}.ts`), dagFile(`steady_${i}`, ["one", "two"], "steady"));
  const member = await startFolderMember(db, dir);
  const added: number[] = [];
  const changed: number[] = [];
  try {
    for (let i = 0; i < SAMPLES; i++) {
      const id = `probe_${i}`;
      const t0 = performance.now();
      await writeFile(path.join(dir, `${id}.ts`), dagFile(id, ["a", "b"], "v1"));
      await until(`${id} served`, () => member.runner.registry.has(id));
      added.push((performance.now() - t0) / 1000);
    }
    for (let i = 0; i < SAMPLES; i++) {
      const id = `probe_${i}`;
      const before = member.runner.registry.currentVersion(id);
      const t0 = performance.now();
      await writeFile(path.join(dir, `${id}.ts`), dagFile(id, ["a", "b", "c"], "v2"));
      await until(`${id} version 2 served`, () => member.runner.registry.currentVersion(id) !== before);
      changed.push((performance.now() - t0) / 1000);
    }
  } finally {
    await stopFolderMember(member);
  }

  // the baseline: a runner started again, until it serves a file it has not seen
  const restarts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const id = `late_${i}`;
    await writeFile(path.join(dir, `${id}.ts`), dagFile(id, ["a"], "late"));
    const t0 = performance.now();
    const again = await startFolderMember(db, dir);
    try {
      await until(`${id} served after a start`, () => again.runner.registry.has(id));
      restarts.push((performance.now() - t0) / 1000);
    } finally {
      await stopFolderMember(again);
    }
  }

  const restart = median(restarts);
  const row = (what: string, xs: readonly number[]): string[] => [
    what,
    String(xs.length),
    seconds(median(xs)),
    seconds(Math.max(...xs)),
    ratio(median(xs), restart),
    Math.max(...xs) <= TARGET_S ? "met" : "MISSED",
  ];
  printTable(`DAG folder: a file served by a running runner, beside a runner started again (${machineLine()})`, ["case", "n", "median s", "max s", "vs restart", `≤ ${TARGET_S} s`], [
    row("new file, watched", added),
    row("changed file, watched", changed),
    [`baseline: runner started again`, String(restarts.length), seconds(restart), seconds(Math.max(...restarts)), "1.00x", "-"],
  ]);
} finally {
  await rm(dir, { recursive: true, force: true });
  await db.drop();
}
