// Which test files need no service: each file is run alone against a stand config whose every port
// is closed (the test stand's ports + 50, its own empty state dir), and the files that pass there
// without starting any process of that stand (found by STAND_CONFIG in /proc/<pid>/environ, then
// killed) and skip none of their tests (a skipped test proved nothing) are written to
// test/service-free.txt, which `make test-fast` runs. Files run with CI=true, as CI runs them. A file that starts a server of
// its own (a private clickhouse-server) needs a service too and is left out by name. Run it again
// after adding tests (a new file not in the list only runs in `make test`, never wrongly in fast):
//   node --import tsx scripts/classify-tests.ts [--jobs 2]
import { execFile } from "node:child_process";
import { readFileSync, readdirSync, statSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseStandConfig, repoRoot } from "../src/config/index.ts";
import { standPaths, removeExternalDataDir } from "../src/services/index.ts";
import { shiftedStandConfigText } from "../testkit/index.ts";

const run = promisify(execFile);
const LIST = path.join(repoRoot, "test", "service-free.txt");
/** Files that start a server of their own: they pass without the stand, but they need a service. */
const OWN_SERVERS = /private-clickhouse|live-clickhouse/;

function testFiles(dir = path.join(repoRoot, "test")): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return testFiles(full);
    return name.endsWith(".test.ts") ? [path.relative(repoRoot, full)] : [];
  });
}

/** The test stand's config with every port moved by `offset` (nothing listens there) and its own state dir. */
function deadStandConfig(dir: string, offset: number): string {
  const file = path.join(dir, `stand.dead-${offset}.yaml`);
  const source = path.join(repoRoot, "test", "stand.test.yaml");
  writeFileSync(file, shiftedStandConfigText(source, offset, path.join(dir, `state-${offset}`), "a dead stand of scripts/classify-tests.ts"));
  return file;
}

/** Processes started with this stand config (a test that brought a stand service up): killed, and counted. */
function killStartedWith(config: string): number {
  let killed = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let environ = "";
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue; // gone, or not ours to read
    }
    if (!environ.split("\0").includes(`STAND_CONFIG=${config}`)) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
      killed += 1;
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}

async function passesAlone(file: string, config: string): Promise<{ file: string; ok: boolean; seconds: number }> {
  const started = Date.now();
  const startedServices = (ok: boolean, tap = ""): { file: string; ok: boolean; seconds: number } => {
    // a file that started a service of the stand needs one, whatever its result
    const killed = killStartedWith(config);
    if (killed > 0) console.log(`       ${file} started ${killed} process(es) of a stand: it needs services`);
    const skipped = tap.split("\n").filter((line) => /# SKIP/.test(line)).length;
    if (skipped > 0) console.log(`       ${file} skipped ${skipped} test(s) with no service: it needs one to prove them`);
    return { file, ok: ok && killed === 0 && skipped === 0, seconds: (Date.now() - started) / 1000 };
  };
  try {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", file], {
      cwd: repoRoot,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      // passing the environment on to the child, with its own stand config
      // eslint-disable-next-line no-restricted-properties
      env: { ...process.env, STAND_CONFIG: config, CI: "true" },
    });
    return startedServices(true, stdout);
  } catch {
    return startedServices(false);
  }
}

async function main(): Promise<void> {
  const jobs = Number(process.argv[process.argv.indexOf("--jobs") + 1] ?? 2) || 2;
  const dir = mkdtempSync(path.join(tmpdir(), "classify-tests-"));
  try {
    const configs = Array.from({ length: jobs }, (_, job) => deadStandConfig(dir, 50 + 10 * job));
    const files = testFiles().sort().filter((f) => !OWN_SERVERS.test(readFileSync(path.join(repoRoot, f), "utf8")));
    const results: { file: string; ok: boolean; seconds: number }[] = [];
    let next = 0;
    await Promise.all(
      configs.map(async (config) => {
        while (next < files.length) {
          const file = files[next++];
          if (file === undefined) break;
          const r = await passesAlone(file, config);
          results.push(r);
          console.log(`${r.ok ? "free " : "stand"} ${r.seconds.toFixed(1).padStart(6)} s  ${file}  (${results.length}/${files.length})`);
        }
      }),
    );
    const free = results.filter((r) => r.ok).map((r) => r.file).sort();
    writeFileSync(
      LIST,
      [
        "# Test files that pass with no service reachable: `make test-fast` runs these (typecheck and lint first).",
        "# Written by scripts/classify-tests.ts (each file run alone against a stand whose every port is closed);",
        "# run it again after adding tests. `make test` runs every file, listed or not.",
        ...free,
        "",
      ].join("\n"),
    );
    const seconds = results.filter((r) => r.ok).reduce((a, r) => a + r.seconds, 0);
    console.log(`${free.length} of ${files.length} files need no service (${seconds.toFixed(0)} s run one by one); written to ${path.relative(repoRoot, LIST)}`);
  } finally {
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
      const config = path.join(dir, file);
      killStartedWith(config);
      removeExternalDataDir(standPaths(parseStandConfig(readFileSync(config, "utf8"), config))); // a Postgres a test initialised
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
