// What `make bi` writes before Superset starts (src/addons/superset.ts), without Superset: the stand
// config's bi section is checked (a bad field is named), the generated superset_config.py and
// gunicorn.conf.py are valid Python that python3 itself reads back with the stand's values (a secret
// with quotes and backslashes included), and the ClickHouse address Superset gets is the reader's.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { ConfigError, parseStandConfig, repoRoot } from "../../src/config/stand.ts";
import { readerUri } from "../../src/addons/superset-dashboard.ts";
import { renderGunicornConfig, renderSupersetConfig, supersetPaths } from "../../src/addons/superset.ts";
import { standPaths } from "../../src/services/paths.ts";

const run = promisify(execFile);
const userFile = path.join(repoRoot, "stand.yaml");
const userText = readFileSync(userFile, "utf8");
const dir = mkdtempSync(path.join(tmpdir(), "superset-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a generated Python file and prints the named globals as JSON, as Superset and gunicorn would read them. */
async function pythonGlobals(text: string, names: string[]): Promise<Record<string, unknown>> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.py`);
  writeFileSync(file, text);
  const script = `import json, runpy; g = runpy.run_path(${JSON.stringify(file)}); print(json.dumps({k: g[k] for k in ${JSON.stringify(names)}}))`;
  const { stdout } = await run("python3", ["-c", script]);
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("make bi's files and config (no Superset started)", () => {
  const config = parseStandConfig(userText, userFile);
  const bi = config.bi;

  it("stand.yaml has a bi section on a port of its own", () => {
    assert.ok(bi, "stand.yaml configures make bi");
    assert.equal(bi.admin.username, "admin");
  });

  it("a short secret_key or a bad login name is refused, naming the field", () => {
    const short = userText.replace(/secret_key: \S+/, "secret_key: too-short");
    assert.throws(() => parseStandConfig(short, userFile), (err: unknown) => err instanceof ConfigError && /bi\.secret_key/.test(err.message));
    const badName = userText.replace("admin: { username: admin,", 'admin: { username: "ad min",');
    assert.throws(() => parseStandConfig(badName, userFile), (err: unknown) => err instanceof ConfigError && /bi\.admin\.username/.test(err.message));
    const sharedPort = userText.replace(/bi:\n {2}port: \d+/, `bi:\n  port: ${config.runner.api_port}`);
    assert.throws(() => parseStandConfig(sharedPort, userFile), /used twice/);
  });

  it("superset_config.py is Python that reads back the secret (quotes and backslashes too) and the metadata path", async () => {
    assert.ok(bi);
    const p = supersetPaths(standPaths(config));
    const secret = `a"b'c\\d-${"x".repeat(32)}`;
    const globals = await pythonGlobals(renderSupersetConfig({ ...bi, secret_key: secret }, p), ["SECRET_KEY", "SQLALCHEMY_DATABASE_URI", "RATELIMIT_STORAGE_URI"]);
    assert.equal(globals.SECRET_KEY, secret);
    assert.equal(globals.SQLALCHEMY_DATABASE_URI, `sqlite:///${p.metadata}`);
    assert.equal(globals.RATELIMIT_STORAGE_URI, "memory://");
  });

  it("gunicorn.conf.py binds loopback at bi.port, with its control socket under the state dir", async () => {
    assert.ok(bi);
    const p = supersetPaths(standPaths(config));
    const globals = await pythonGlobals(renderGunicornConfig(config, bi, p), ["bind", "workers", "control_socket"]);
    assert.equal(globals.bind, `127.0.0.1:${bi.port}`);
    assert.equal(globals.workers, 1);
    assert.equal(globals.control_socket, path.join(p.dir, "gunicorn.ctl"));
  });

  it("Superset reads ClickHouse as reader over the native protocol of the first node, password escaped", () => {
    const uri = new URL(readerUri({ ...config, clickhouse: { ...config.clickhouse, accounts: { ...config.clickhouse.accounts, reader: { user: "reader", password: "p@ss/word" } } } }));
    assert.equal(uri.protocol, "clickhouse+native:");
    assert.equal(uri.username, "reader");
    assert.equal(decodeURIComponent(uri.password), "p@ss/word");
    assert.equal(Number(uri.port), config.clickhouse.nodes[0]?.tcp_port);
    assert.equal(uri.pathname, "/dm");
  });
});
