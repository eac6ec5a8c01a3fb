// Docs that run: every shell block of README.md and docs/*.md marked `runs` (testkit/doc-blocks.ts)
// is run on the test stand, the blocks of a file in order in one bash, with the user's ports and
// state directory rewritten to the test stand's. A block that exits non-zero, or whose output lacks
// what its `# expect:` lines say, fails the test naming the file and line. They play a day and take
// and restore a snapshot, so they hold the world lock, and the test waits for the world runs they
// started before it gives the world back.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { loadStandConfig, parseStandConfig, repoRoot, type StandConfig } from "../../src/config/stand.ts";
import { WORLD_DAG_IDS } from "../../src/world/position.ts";
import { documentationFiles, shellBlocks, type DocBlock } from "../../testkit/doc-blocks.ts";
import { api, waitForRun } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { readFileSync } from "node:fs";
import type { DagRunResponse } from "../../src/api/schemas.ts";

/** Every port of the user's stand config mapped to the test stand's in the same place. */
function portMap(user: unknown, test: unknown, out = new Map<number, number>(), key = ""): Map<number, number> {
  if (typeof user === "number" && typeof test === "number" && /port$/.test(key)) {
    out.set(user, test);
  } else if (Array.isArray(user) && Array.isArray(test)) {
    user.forEach((u, i) => portMap(u, test[i], out, key));
  } else if (user && test && typeof user === "object" && typeof test === "object") {
    for (const [k, u] of Object.entries(user)) portMap(u, (test as Record<string, unknown>)[k], out, k);
  }
  return out;
}

/** The block as it runs on the test stand: the user's ports and state directory replaced. */
function forTestStand(body: string, user: StandConfig, test: StandConfig): string {
  const ports = portMap(user, test);
  const pattern = new RegExp(`\\b(${[...ports.keys()].join("|")})\\b`, "g");
  const state = new RegExp(`(^|[\\s"'=(])${user.state_dir.replace(/[.]/g, "\\.")}/`, "gm");
  return body.replace(pattern, (p) => String(ports.get(Number(p)) ?? p)).replace(state, `$1${test.state_dir}/`);
}

function bash(script: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const user = parseStandConfig(readFileSync(path.join(repoRoot, "stand.yaml"), "utf8"), "stand.yaml");
const test = loadStandConfig();
const runnable = documentationFiles()
  .map((file) => ({ file, blocks: shellBlocks(file).filter((b) => b.kind === "runs") }))
  .filter((d) => d.blocks.length > 0);

async function activeWorldRuns(): Promise<DagRunResponse[]> {
  const pages = await Promise.all(
    WORLD_DAG_IDS.map((dagId) => api.request<{ dag_runs: DagRunResponse[] }>("GET", `api/v2/dags/${dagId}/dagRuns`, { query: { limit: 20, order_by: "-queued_at" } })),
  );
  return pages.flatMap((p) => p.dag_runs).filter((r) => r.state === "queued" || r.state === "running");
}

describe("the docs' runnable shell blocks run on the test stand", () => {
  useWorldSuite({
    wholeWorld: true,
    tearDown: async () => {
      for (const run of await activeWorldRuns()) await waitForRun(run.dag_id, run.dag_run_id, 600);
    },
  });

  it("the user's ports and state directory become the test stand's, and nothing else changes", () => {
    assert.notEqual(user.runner.api_port, test.runner.api_port);
    const line = `curl http://127.0.0.1:${user.runner.api_port}/x; source ${user.state_dir}/env; echo 1${user.runner.api_port}`;
    assert.equal(forTestStand(line, user, test), `curl http://127.0.0.1:${test.runner.api_port}/x; source ${test.state_dir}/env; echo 1${user.runner.api_port}`);
  });

  for (const { file, blocks } of runnable) {
    it(`${file}: ${blocks.length} block(s) at line ${blocks.map((b) => b.line).join(", ")}`, async () => {
      const script = [
        "set -euo pipefail",
        // STAND_CONFIG (the test stand) passes to the block's commands with the rest of the environment
        ...blocks.flatMap((b: DocBlock) => [`echo "@@ begin ${b.line}"`, forTestStand(b.body, user, test), `echo "@@ end ${b.line}"`]),
      ].join("\n");
      const { code, output } = await bash(script, 600_000);
      const sections = new Map<number, string>();
      for (const m of output.matchAll(/@@ begin (\d+)\n([\s\S]*?)(?=@@ end \1\n|$)/g)) sections.set(Number(m[1]), m[2] ?? "");
      const failed = blocks.find((b) => !output.includes(`@@ end ${b.line}\n`));
      assert.equal(code, 0, `${file}:${failed?.line ?? "?"}: the block exited ${String(code)}:\n${forTestStand(failed?.body ?? "", user, test)}\n--- output ---\n${sections.get(failed?.line ?? -1) ?? output}`);
      for (const b of blocks) {
        const said = sections.get(b.line) ?? "";
        for (const expect of b.expects) assert.ok(said.includes(expect), `${file}:${b.line}: the output does not hold "${expect}":\n${said}`);
      }
    });
  }
});
