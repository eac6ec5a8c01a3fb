// A runner with the DAG processor on a folder of its own (test/dag-processor, test/web): the
// folder's files are written by the test, parsed by the real processor (esbuild, a worker thread,
// the leader lock) into a database of the test's own, and served by a real engine.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DagProcessor } from "../../src/dag-processor/index.ts";
import { createRunner, DagRegistry, type Runner } from "../../src/runner/index.ts";
import { silentLogger, type TestDatabase } from "./runner-db.ts";

const RUNNER_INDEX = JSON.stringify(path.resolve(import.meta.dirname, "../../src/runner/index.ts"));

/** The import line a DAG file in a temporary folder needs for the engine. */
export const DEFINE_DAG_IMPORT = `import { defineDag } from ${RUNNER_INDEX};`;

/** A DAG file: tasks in a chain, each logging its name and the file's mark (so a run shows which code ran). */
export function dagFile(id: string, tasks: readonly string[], mark: string): string {
  const chain = tasks
    .map((t, i) => `.task(${JSON.stringify(t)}, ${i === 0 ? "" : `{ upstream: [${JSON.stringify(tasks[i - 1])}], retries: 1 }, `}(ctx) => { ctx.log.info("ran ${mark}"); })`)
    .join("\n  ");
  return `${DEFINE_DAG_IMPORT}\nexport default defineDag({ id: ${JSON.stringify(id)}, schedule: null })\n  ${chain}\n  .build();\n`;
}

export interface FolderMember {
  runner: Runner;
  processor: DagProcessor;
}

/** A runner whose DAGs come from `dir` only (a 200 ms rescan beside the watcher, a 2 s parse timeout). */
export async function startFolderMember(db: TestDatabase, dir: string): Promise<FolderMember> {
  const processor = new DagProcessor({ pgUrl: db.url, folders: [{ name: "probe", dir }], parseTimeoutMs: 2000, rescanMs: 200, leaderRetryMs: 300, logger: silentLogger });
  const runner = createRunner({
    pgUrl: db.url,
    dags: new DagRegistry([], { pending: true }),
    loadDagVersion: processor.loadVersion,
    concurrency: 2,
    leaseSeconds: 10,
    failPoints: true,
    logger: silentLogger,
  });
  await runner.start();
  await processor.start(runner);
  return { runner, processor };
}

export async function stopFolderMember(m: FolderMember): Promise<void> {
  await m.processor.stop();
  await m.runner.stop();
}

/**
 * Waits for a condition the processor brings about (a file event or the rescan, a NOTIFY, then an
 * import): a processor has no hook for "parsed", so this reads until it holds, and fails naming it.
 * How fast a file is served is a figure for a benchmark; the 30 s here only bounds a broken processor.
 */
export async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
    await sleep(50);
  }
}
