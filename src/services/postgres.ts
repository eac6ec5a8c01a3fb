// PostgreSQL from Debian's packages, run as the `postgres` OS user (initdb and postgres refuse root).
// The stand role from stand.yaml is the cluster's bootstrap superuser (password auth), and owns the
// databases `postgres.database` and `postgres.runner_database`.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { StandConfig } from "../config/index.ts";
import type { ServiceDefinition, StandContext } from "./service.ts";
import { childOutput, errorMessage } from "../errors.ts";

const execFileAsync = promisify(execFile);

interface OsUser {
  uid: number;
  gid: number;
}

/** uid/gid of the `postgres` OS user, which Debian's postgresql package creates. */
function postgresOsUser(): OsUser {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  const fields = line?.split(":");
  if (!fields || fields.length < 4) {
    throw new Error("postgres: no `postgres` OS user; install Debian's postgresql package (make install)");
  }
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/** The newest Debian PostgreSQL server binaries: /usr/lib/postgresql/<major>/bin. */
export function postgresBinDir(): string {
  const base = "/usr/lib/postgresql";
  const majors = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(path.join(base, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] === undefined) throw new Error(`postgres: no server binaries under ${base}; run make install`);
  return path.join(base, majors[0], "bin");
}

/** The directory `postgres` cannot enter on the way to `dir`, or undefined when it can reach it. */
function blockingDirectory(dir: string, user: OsUser): string | undefined {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const st = statSync(d);
    const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return d;
    if (d === path.dirname(d)) return undefined;
  }
}

/**
 * The real data directory. Normally <state_dir>/postgres/data; when the `postgres` OS user cannot walk
 * down to it (a checkout under /root, mode 700) the data lives in postgres's home instead, with a
 * symlink at the usual place so `clean` and the docs still find it.
 */
function resolveDataDir(ctx: StandContext, user: OsUser): string {
  const link = ctx.paths.postgres.data;
  const existing = lstatSync(link, { throwIfNoEntry: false });
  if (existing) return existing.isSymbolicLink() ? readlinkSync(link) : link;
  const blocked = blockingDirectory(link, user);
  if (blocked === undefined) return link;
  const hash = createHash("sha256").update(ctx.paths.root).digest("hex").slice(0, 12);
  const outside = path.join(POSTGRES_HOME, `clickstream-stand-${hash}`);
  mkdirSync(outside, { recursive: true });
  chownSync(outside, user.uid, user.gid);
  symlinkSync(path.join(outside, "data"), link);
  ctx.print(`postgres: the postgres OS user cannot enter ${blocked}; data goes to ${outside}/data (symlinked from ${link})`);
  return path.join(outside, "data");
}

const POSTGRES_HOME = "/var/lib/postgresql";

/** Removes a data directory that lives outside the state dir (see resolveDataDir); `clean` calls it. */
export function removeExternalDataDir(paths: StandContext["paths"]): void {
  const link = paths.postgres.data;
  if (!lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) return;
  const target = readlinkSync(link);
  if (path.dirname(path.dirname(target)) === POSTGRES_HOME) rmSync(path.dirname(target), { recursive: true, force: true });
}

async function initCluster(ctx: StandContext, user: OsUser, data: string): Promise<void> {
  mkdirSync(data, { recursive: true });
  chownSync(data, user.uid, user.gid);
  chmodSync(data, 0o700);
  // beside the data dir, which the postgres user can reach wherever resolveDataDir put it
  const pwfile = path.join(path.dirname(data), "initdb-password");
  writeFileSync(pwfile, ctx.config.postgres.password + "\n", { mode: 0o600 });
  chownSync(pwfile, user.uid, user.gid);
  ctx.print(`postgres: initdb ${data} (superuser ${ctx.config.postgres.user})`);
  try {
    await execFileAsync(
      path.join(postgresBinDir(), "initdb"),
      ["-D", data, "-U", ctx.config.postgres.user, `--pwfile=${pwfile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8"],
      { uid: user.uid, gid: user.gid, cwd: data },
    );
  } catch (err) {
    throw new Error(`postgres: initdb failed: ${childOutput(err).stderr || errorMessage(err)}`, { cause: err });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

function clientConfig(config: StandConfig, database: string): pg.ClientConfig {
  return {
    host: config.bind_host,
    port: config.postgres.port,
    user: config.postgres.user,
    password: config.postgres.password,
    database,
    connectionTimeoutMillis: 2000,
  };
}

async function withClient<T>(config: StandConfig, database: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(clientConfig(config, database));
  client.on("error", () => undefined); // a server shutting down mid-probe must not crash the CLI
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function ensureDatabases(ctx: StandContext): Promise<void> {
  const wanted = [ctx.config.postgres.database, ctx.config.postgres.runner_database];
  await withClient(ctx.config, "postgres", async (client) => {
    for (const db of wanted) {
      const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [db]);
      if (found.rowCount === 0) {
        // CREATE DATABASE takes no parameters: the name goes through the identifier quoter
        await client.query(`CREATE DATABASE ${quoteIdent(db)} OWNER ${quoteIdent(ctx.config.postgres.user)}`);
        ctx.print(`postgres: created database ${db}`);
      }
    }
  });
}

const OLD_SERVER_PATIENCE_MS = 30_000;

/** Pids of processes still running in the data directory (their working directory): a postmaster
 * and its backends, which outlive a postmaster killed with -9 until they notice it is gone. */
function processesIn(data: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === data) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/**
 * After a crash (kill -9 of the postmaster) the old server's pid can linger a moment as a zombie and
 * its backends until they notice the postmaster is gone; a new postmaster started meanwhile refuses
 * ("lock file postmaster.pid already exists", or its shared memory still in use) and exits. Waits
 * until the pid in postmaster.pid and every process in the data directory are gone, saying what it
 * waits for; never removes postmaster.pid itself (postgres does, once its pid is gone).
 */
async function waitForOldServer(ctx: StandContext, data: string): Promise<void> {
  const lockFile = path.join(data, "postmaster.pid");
  const started = Date.now();
  let said = 0;
  for (;;) {
    const lockPid = existsSync(lockFile) ? Number(readFileSync(lockFile, "utf8").split("\n")[0]) : Number.NaN;
    const waiting = [...new Set([...(Number.isInteger(lockPid) && existsSync(`/proc/${lockPid}`) ? [lockPid] : []), ...processesIn(data)])];
    if (waiting.length === 0) return;
    const waited = Date.now() - started;
    if (waited > OLD_SERVER_PATIENCE_MS) {
      throw new Error(`postgres: processes of an earlier server still run in ${data} after ${OLD_SERVER_PATIENCE_MS / 1000} s (pids ${waiting.join(", ")}); a new server cannot start beside them. Look at them with ps -o pid,stat,cmd -p ${waiting.join(",")} and stop them`);
    }
    if (waited - said >= 2000) {
      ctx.print(`postgres: waiting for the earlier server's processes to end (pids ${waiting.join(", ")}; ${(waited / 1000).toFixed(0)} s)`);
      said = waited;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function postgresService(ctx: StandContext): ServiceDefinition {
  const config = ctx.config;
  const { log } = ctx.paths.postgres;
  // the real directory (see resolveDataDir): known after prepare, which always runs before launch
  const data = (): string => realpathSync(ctx.paths.postgres.data);
  return {
    name: "postgres",
    port: config.postgres.port,
    stopSignal: "SIGINT", // "fast" shutdown: SIGTERM would wait for every client to disconnect
    stopGraceMs: 30_000,
    logFiles: [log],
    healthWhat: `SELECT 1 as ${config.postgres.user} on ${config.bind_host}:${config.postgres.port}`,
    hint: `read ${log}; a stale postmaster.pid in ${ctx.paths.postgres.data} after a crash is removed by postgres itself when the pid is gone; ` +
      `if initdb left a half-made cluster, run make clean`,
    async prepare(c) {
      const user = postgresOsUser();
      mkdirSync(c.paths.postgres.dir, { recursive: true });
      const data = resolveDataDir(c, user);
      if (!existsSync(path.join(data, "PG_VERSION"))) await initCluster(c, user, data);
      else await waitForOldServer(c, data);
    },
    launch() {
      const user = postgresOsUser();
      return {
        service: "postgres",
        command: path.join(postgresBinDir(), "postgres"),
        // the data dir path is the marker that proves the pid is ours
        args: [
          "-D", data(),
          "-p", String(config.postgres.port),
          "-c", `listen_addresses=${config.bind_host}`,
          "-c", "unix_socket_directories=", // TCP only: no socket path in /var/run to own or collide on
          "-c", "max_connections=200",
          "-c", "shared_buffers=128MB",
        ],
        logFile: log,
        marker: data(),
        uid: user.uid,
        gid: user.gid,
        cwd: data(),
      };
    },
    probe: (c) => withClient(c.config, "postgres", async (client) => (await client.query("SELECT 1")).rowCount === 1),
    afterHealthy: ensureDatabases,
  };
}
