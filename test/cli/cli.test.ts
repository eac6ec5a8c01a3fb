// The CLI as a child process against the API on an ephemeral port: trigger --wait follows a run
// and exits by its result; an unreachable API is named with what to do; commands read the config.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { launchArgs, repoRoot, standConfigPath } from "../../src/config/stand.ts";
import { TEST_TOKEN, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { taskHolds, testDags } from "../../testkit/runner/api-dags.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string> = {}, onLine: (line: string) => void = () => {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, launchArgs(path.join(repoRoot, "src/cli/main.ts"), ...args), {
      cwd: repoRoot,
      // Passing the environment on to the child, not reading configuration from it.
      // eslint-disable-next-line no-restricted-properties
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

void describe("runner CLI", () => {
  let api: ApiHarness;
  let connection: string[];
  let tempDir: string;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
    connection = ["--api-url", api.baseUrl, "--token", TEST_TOKEN];
    tempDir = mkdtempSync(path.join(os.tmpdir(), "runner-cli-"));
  });
  after(() => {
    rmSync(tempDir, { recursive: true, force: true });
  });

  void it("trigger --wait prints each task's state changes as they happen and exits 0 on success", async () => {
    // Each task is held until the CLI has printed it running (testkit/runner/api-dags.ts taskHolds): a
    // CLI that printed only at the end, or missed a state, would never release it (30 s, then red).
    const released: string[] = [];
    const release = (line: string) => {
      for (const task of ["first", "second"]) {
        if (new RegExp(`task ${task} .*-> running`).test(line) && !released.includes(task)) {
          released.push(task);
          taskHolds.release(`cli_ok/${task}`);
        }
      }
    };
    const res = await runCli([...connection, "trigger", "api_ok", "--conf", '{"days": 2, "hold": true}', "--run-id", "cli_ok", "--wait", "--poll-ms", "50"], {}, release);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.deepEqual(released, ["first", "second"], `the CLI printed each task running while it ran:\n${res.stdout}`);
    assert.match(res.stdout, /triggered api_ok\/cli_ok/);
    assert.match(res.stdout, /run +cli_ok: .*-> running/);
    for (const task of ["first", "second"]) assert.match(res.stdout, new RegExp(`task ${task} .*-> success`), res.stdout);
    const log = await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/cli_ok/taskInstances/second/logs/1", { headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    assert.match(log.text, /second: released/, "second ran on until the CLI had printed it running");
    assert.match(res.stdout, /finished success/);
  });

  void it("trigger --wait exits 1 when the run fails, naming the failed task", async () => {
    const res = await runCli([...connection, "trigger", "api_fail", "--wait"]);
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stdout, /task boom .*-> failed/);
    assert.match(res.stdout, /task after .*-> upstream_failed/);
    assert.match(res.stdout, /finished failed/);
  });

  void it("an unreachable API gives a clear message naming the URL and exit 2", async () => {
    const port = await closedPort();
    const res = await runCli(["--api-url", `http://127.0.0.1:${port}`, "--token", "x", "trigger", "api_ok", "--wait"]);
    assert.equal(res.code, 2, res.stdout + res.stderr);
    assert.match(res.stderr, new RegExp(`cannot reach the runner API at http://127\\.0\\.0\\.1:${port}`));
    assert.match(res.stderr, /ECONNREFUSED/);
    assert.match(res.stderr, /Is the runner running\?/);
  });

  void it("API refusals exit 2 with the API's detail; bad usage exits 2", async () => {
    const unknown = await runCli([...connection, "trigger", "no_such_dag"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /404: DAG 'no_such_dag' is not known/);
    const badConf = await runCli([...connection, "trigger", "api_ok", "--conf", "{not json"]);
    assert.equal(badConf.code, 2);
    assert.match(badConf.stderr, /--conf is not valid JSON/);
    const wrongType = await runCli([...connection, "trigger", "api_ok", "--conf", '{"days": "two"}']);
    assert.equal(wrongType.code, 2);
    assert.match(wrongType.stderr, /days/);
    const missingArg = await runCli([...connection, "tasks", "api_ok"]);
    assert.equal(missingArg.code, 2);
    assert.match(missingArg.stderr, /missing required argument/);
  });

  void it("reads runs, tasks and logs of a run", async () => {
    const runs = await runCli([...connection, "runs", "api_ok"]);
    assert.equal(runs.code, 0, runs.stderr);
    assert.match(runs.stdout, /cli_ok +success/);
    const tasks = await runCli([...connection, "tasks", "api_ok", "cli_ok"]);
    assert.equal(tasks.code, 0, tasks.stderr);
    assert.match(tasks.stdout, /first +success +1\//);
    const logs = await runCli([...connection, "logs", "api_ok", "cli_ok", "first"]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /Z INFO /);
    const noTry = await runCli([...connection, "logs", "api_ok", "cli_ok", "first", "--try", "7"]);
    assert.equal(noTry.code, 2);
    assert.match(noTry.stderr, /no try 7/);
  });

  void it("takes the API address and token from the stand config, and edits variables and pauses", async () => {
    const configFile = path.join(tempDir, "stand.yaml");
    const port = new URL(api.baseUrl).port;
    const text = readFileSync(standConfigPath(), "utf8")
      .replace(/^(\s*api_port:\s*)\d+/m, `$1${port}`)
      .replace(/^(\s*api_token:\s*).*$/m, `$1${TEST_TOKEN}`);
    writeFileSync(configFile, text);
    const env = { STAND_CONFIG: configFile };

    const set = await runCli(["vars", "set", "cli_var", "7", "--description", "from the CLI"], env);
    assert.equal(set.code, 0, set.stderr);
    const change = await runCli(["vars", "set", "cli_var", "8"], env);
    assert.equal(change.code, 0, change.stderr);
    const get = await runCli(["vars", "get", "cli_var"], env);
    assert.equal(get.stdout.trim(), "8");
    const history = await runCli(["vars", "history", "cli_var"], env);
    assert.match(history.stdout, /-\s+7\s+api:cli/);
    assert.match(history.stdout, /7\s+8\s+api:cli/);
    const deleted = await runCli(["vars", "delete", "cli_var"], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal((await runCli(["vars", "get", "cli_var"], env)).code, 2);

    const pause = await runCli(["pause", "api_fail"], env);
    assert.equal(pause.stdout.trim(), "api_fail is paused");
    const dags = await runCli(["--json", "dags"], env);
    const listed = JSON.parse(dags.stdout) as { dags: { dag_id: string; is_paused: boolean }[] };
    assert.equal(listed.dags.find((d) => d.dag_id === "api_fail")?.is_paused, true);
    const unpause = await runCli(["unpause", "api_fail"], env);
    assert.equal(unpause.stdout.trim(), "api_fail is unpaused");
  });
});
