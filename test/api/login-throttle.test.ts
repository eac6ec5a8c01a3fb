// Guessing passwords at the runner (src/api/login-throttle.ts, src/api/open-listen.ts), on the real
// app over HTTP with the throttle in memory: a user name's wrong passwords, then an address's, end in
// 429 with Retry-After, the right password included, until the window ends; a success clears its
// name's count; other names from other addresses go on (a client bound to 127.0.0.2 is another
// address). Before the throttle, 200 wrong passwords took 341 ms: about 600 guesses a second.
// A runner listening beyond loopback needs credentials on every route but login and health, takes
// Basic for the web view, counts wrong Basic passwords too, and does not start with a weak token.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { parse, stringify } from "yaml";
import type { RunnerService } from "../../src/runner/service.ts";
import { assertOpenListenSecured, isLoopbackHost } from "../../src/api/auth.ts";
import { LoginThrottle } from "../../src/api/login-throttle.ts";
import { repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput } from "../../src/errors.ts";
import { auth, call, startApi, TEST_USER, type ApiHarness } from "../../testkit/runner/api-app.ts";

// login, health and version need no engine; a failed login and a token issued are written to the event log
const events: string[] = [];
const noEngine = { recordEvent: (e: { event: string }) => Promise.resolve(void events.push(e.event)) } as unknown as RunnerService;

/** POST /auth/token from a chosen local address (127.0.0.x: each is another client address). */
function loginFrom(baseUrl: string, localAddress: string, username: string, password: string): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  const url = new URL(`${baseUrl}/auth/token`);
  const body = JSON.stringify({ username, password });
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("login throttle (in memory, over HTTP)", () => {
  const servers: ApiHarness[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const start = async (perUser: number, perAddress: number, windowSeconds = 60): Promise<string> => {
    const api = await startApi(noEngine, undefined, { loginThrottle: LoginThrottle.inMemory({ per_user: perUser, per_address: perAddress, window_seconds: windowSeconds }) });
    servers.push(api);
    return api.baseUrl;
  };

  it("a name's wrong passwords end in 429 with Retry-After, the right one refused too; another name goes on", async () => {
    const base = await start(10, 1000);
    for (let i = 0; i < 10; i++) assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, `wrong-${i}`)).status, 401);
    const refused = await loginFrom(base, "127.0.0.1", TEST_USER.username, TEST_USER.password);
    assert.equal(refused.status, 429, refused.body);
    assert.ok(Number(refused.retryAfter) >= 1 && Number(refused.retryAfter) <= 60, `Retry-After ${refused.retryAfter}`);
    assert.match(refused.body, /too many wrong passwords for user 'tester'/);
    assert.equal((await loginFrom(base, "127.0.0.1", "second", "second-password-2")).status, 201, "another name is not held");
  });

  it("200 guesses in a row: 10 are tried, 190 refused without a password check", async () => {
    const base = await start(10, 1000);
    const statuses = new Map<number, number>();
    events.length = 0;
    for (let i = 0; i < 200; i++) {
      const { status } = await loginFrom(base, "127.0.0.1", TEST_USER.username, `guess-${i}`);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(statuses), { 401: 10, 429: 190 });
    assert.deepEqual(events, Array<string>(10).fill("login_failed"), "each password tried is in the event log; refused guesses are not checked, so not logged");
  });

  it("an address guessing many names is refused for every name; another address is not", async () => {
    const base = await start(1000, 15);
    for (let i = 0; i < 15; i++) assert.equal((await loginFrom(base, "127.0.0.2", `name-${i}`, "wrong-password")).status, 401);
    const refused = await loginFrom(base, "127.0.0.2", TEST_USER.username, TEST_USER.password);
    assert.equal(refused.status, 429);
    assert.match(refused.body, /from 127\.0\.0\.2/);
    assert.equal((await loginFrom(base, "127.0.0.3", TEST_USER.username, TEST_USER.password)).status, 201, "another address logs in");
  });

  it("a right password clears its name's count; the window's end frees a held name", async () => {
    const base = await start(3, 1000, 1);
    for (let i = 0; i < 2; i++) await loginFrom(base, "127.0.0.1", TEST_USER.username, "wrong-password");
    assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, TEST_USER.password)).status, 201);
    for (let i = 0; i < 2; i++) assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, "wrong-password")).status, 401, "the count started again");
    assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, "wrong-password")).status, 401);
    assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, TEST_USER.password)).status, 429, "held");
    await new Promise((r) => setTimeout(r, 1100)); // the one-second window ends
    assert.equal((await loginFrom(base, "127.0.0.1", TEST_USER.username, TEST_USER.password)).status, 201);
  });
});

describe("a runner listening beyond loopback", () => {
  let api: ApiHarness | undefined;
  after(async () => api?.close());
  const basic = (user: string, password: string): Record<string, string> => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });

  it("needs credentials on every route but login and health: Bearer token, login JWT or Basic", async () => {
    api = await startApi(noEngine, undefined, { credentialsEverywhere: true, loginThrottle: LoginThrottle.inMemory({ per_user: 3, per_address: 100, window_seconds: 60 }) });
    const read = await call(api.baseUrl, "GET", "/api/v2/version", { airflowCheck: false });
    assert.equal(read.status, 401, "a read without a token");
    assert.match(read.headers.get("www-authenticate") ?? "", /Basic realm="runner"/);
    assert.equal((await call(api.baseUrl, "GET", "/ui", { airflowCheck: false })).status, 401, "the web view without a token");
    assert.equal((await call(api.baseUrl, "GET", "/metrics", { airflowCheck: false })).status, 401, "metrics without a token");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/monitor/health", { airflowCheck: false })).status !== 401, true, "health stays open");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/version", { headers: auth })).status, 200, "the api_token");
    const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: TEST_USER, airflowCheck: false });
    assert.equal(login.status, 201, "login stays open");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/version", { headers: { Authorization: `Bearer ${login.body.access_token}` } })).status, 200, "the login JWT");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/version", { headers: basic(TEST_USER.username, TEST_USER.password) })).status, 200, "Basic, as a browser sends it");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/version", { headers: { Authorization: "Bearer not-the-token" }, airflowCheck: false })).status, 403);
  });

  it("wrong Basic passwords count toward the throttle", async () => {
    assert.ok(api);
    for (let i = 0; i < 3; i++) assert.equal((await call(api.baseUrl, "GET", "/api/v2/version", { headers: basic("second", `wrong-${i}`), airflowCheck: false })).status, 401);
    const held = await call(api.baseUrl, "GET", "/api/v2/version", { headers: basic("second", "second-password-2"), airflowCheck: false });
    assert.equal(held.status, 429);
    assert.ok(held.headers.get("retry-after"));
  });

  it("loopback is 127.0.0.0/8, ::1 and localhost; nothing else", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) assert.equal(isLoopbackHost(host), true, host);
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "runner", "127.0.0.1.example.com"]) assert.equal(isLoopbackHost(host), false, host);
    assert.doesNotThrow(() => assertOpenListenSecured("127.0.0.1", "short"));
    assert.throws(() => assertOpenListenSecured("0.0.0.0", "stand-token"), /runner\.api_token is 11 characters and must be at least 24/);
  });

  it("the runner process refuses to start beyond loopback with a short api_token, naming the field", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "open-listen-"));
    try {
      const config = parse(readFileSync(path.join(repoRoot, "test", "stand.none.yaml"), "utf8")) as { runner: Record<string, unknown> };
      config.runner.listen_host = "0.0.0.0";
      config.runner.api_token = "stand-token";
      const file = path.join(dir, "stand.yaml");
      writeFileSync(file, stringify(config));
      let out = "";
      let code = 0;
      try {
        // eslint-disable-next-line no-restricted-properties -- the child gets this environment with its own stand file
        await promisify(execFile)(process.execPath, ["--import", "tsx", "src/server/main.ts"], { cwd: repoRoot, env: { ...process.env, STAND_CONFIG: file }, timeout: 60_000 });
      } catch (err) {
        const o = childOutput(err);
        out = o.stdout + o.stderr;
        code = childExitCode(err);
      }
      assert.equal(code, 1, out);
      assert.match(out, /runner\.api_token is 11 characters and must be at least 24/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
