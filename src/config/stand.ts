// The one config module: loads stand.yaml (or $STAND_CONFIG), validates it, returns a frozen object.
// Nothing else in the project reads process.env; ask this module instead.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { WORLD_SIZE_NAMES } from "../../generator/src/index.ts";
import { loaderConfigSchema } from "./loader.ts";
import { errorMessage } from "../errors.ts";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * How a program of ours that loads no TypeScript at run time is started: `node scripts/launch.mjs
 * ENTRY.ts ARGS…` runs it from an esbuild bundle built again whenever a file it is built from
 * changed (a third of tsx's start-up CPU); the runner, which import()s the DAG folder, stays on
 * `node --import tsx`.
 */
export function launchArgs(entry: string, ...args: string[]): string[] {
  return [path.join(repoRoot, "scripts", "launch.mjs"), entry, ...args];
}

const port = z.number().int().min(1024).max(65535);
const worldSize = z.enum(WORLD_SIZE_NAMES);
const account = z.object({ user: z.string().min(1), password: z.string() }).strict();

// `host` fields: where clients reach a service. The local stand binds everything to bind_host
// (127.0.0.1); inside docker compose the hosts are service names.
const host = z.string().min(1).regex(/^[A-Za-z0-9.-]+$/, "must be a host name or IPv4 address").optional();

const clickhouseNode = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_-]*$/),
    host,
    shard: z.number().int().min(1),
    http_port: port,
    tcp_port: port,
    interserver_port: port,
  })
  .strict();

export const standConfigSchema = z
  .object({
    bind_host: z.literal("127.0.0.1"),
    state_dir: z.string().min(1),
    health_timeout_seconds: z.number().int().min(5).max(1800),
    postgres: z
      .object({
        host,
        port,
        user: z.string().min(1),
        password: z.string().min(1),
        database: z.string().min(1),
        runner_database: z.string().min(1),
      })
      .strict(),
    zookeeper: z.object({ host, port }).strict(),
    clickhouse: z
      .object({
        cluster: z.string().min(1),
        nodes: z.array(clickhouseNode).length(2),
        max_memory_usage_bytes: z.number().int().positive(),
        /** How long a finished ON CLUSTER entry stays in the distributed DDL queue (ClickHouse's
         * task_max_lifetime; absent: its own week). check-clickhouse reads every entry. */
        ddl_queue_max_age_seconds: z.number().int().min(60).optional(),
        accounts: z
          .object({ admin: account, lifecycle: account, etl: account, reader: account })
          .strict(),
      })
      .strict(),
    kafka: z
      .object({
        host,
        version: z.string().regex(/^4\.\d+\.\d+$/, "kafka.version must be a 4.x release"),
        port,
        controller_port: port,
        heap_mb: z.number().int().min(128).max(8192),
        /** How long deleting the world's consumer groups waits for a reader dropped a moment ago
         * to leave its group, per try (tasks/consumer-groups.ts). */
        group_leave_grace_seconds: z.number().int().min(1).max(300).default(15),
        /** The broker's JIT stops at its first tier (-XX:TieredStopAtLevel=1): a fraction of the
         * compile CPU of a start, slower code under load. For a stand that starts brokers often and
         * loads them little (the test stands); the user's stand keeps the full JIT (make bench). */
        quick_jit: z.boolean().default(false),
      })
      .strict(),
    runner: z
      .object({
        /** Address the API listens on: bind_host locally, 0.0.0.0 inside a container. */
        listen_host: z.string().min(1).optional(),
        /** The first instance's API port; instance k listens on api_port + k - 1. */
        api_port: port,
        /** Runner processes on this stand (a pool on one metadata database, docs/deploy.md); each
         * serves the API and the web view on its own port and runs workers. */
        instances: z.number().int().min(1).max(8).default(1),
        api_token: z.string().min(8),
        worker_concurrency: z.number().int().min(1).max(64),
        lease_seconds: z.number().int().min(2).max(60),
        /** Honour armed fail and pause points (runner.fail_points, runner.pause_points): the test
         * stand's fault tests only; refused in the user's stand.yaml (parseStandConfig). */
        fail_points: z.boolean().optional(),
        /** The DAG processor (src/dag-processor): it parses dags/ and <state_dir>/dags. */
        dags: z
          .object({
            /** A DAG file whose top level runs longer is an import error (Airflow's dag_file_processor_timeout). */
            parse_timeout_seconds: z.number().min(1).max(600).default(30),
            /** The rescan under the file watcher: how often the folders' sizes and mtimes are compared. */
            rescan_ms: z.number().int().min(100).max(60_000).default(1000),
          })
          .strict()
          .default({ parse_timeout_seconds: 30, rescan_ms: 1000 }),
        /** Airflow-style login (POST /auth/token): users and the key that signs their JWTs. */
        auth: z
          .object({
            jwt_secret: z.string().min(32, "runner.auth.jwt_secret must be at least 32 characters (it signs HS256 tokens)"),
            token_ttl_seconds: z.number().int().min(60).max(7 * 24 * 3600).default(86_400),
            users: z
              .array(z.object({ username: z.string().min(1).max(100), password: z.string().min(8) }).strict())
              .min(1),
            /** Wrong passwords tolerated per user name and per client address within window_seconds;
             * beyond, logins are 429 until the window ends (src/api/login-throttle.ts). */
            login_throttle: z
              .object({
                per_user: z.number().int().min(1).max(10_000).default(10),
                per_address: z.number().int().min(1).max(100_000).default(30),
                window_seconds: z.number().int().min(1).max(86_400).default(300),
              })
              .strict()
              .default({ per_user: 10, per_address: 30, window_seconds: 300 }),
          })
          .strict()
          .optional(),
        /** The REST API's switches. */
        api: z
          .object({
            /** POST /api/v2/connections/test and enqueue-test reach the system a connection names, from the
             * runner's network (Airflow's core.test_connection, Disabled by default there too): enabled lets
             * whoever holds a token probe any host and port the runner can reach; disabled answers 403.
             * Airflow's spelling (Enabled, Disabled) is taken too. */
            test_connection: z
              .preprocess((v) => (typeof v === "string" ? v.toLowerCase() : v), z.enum(["disabled", "enabled"], { error: "runner.api.test_connection is disabled or enabled" }))
              .default("disabled"),
            /** GET /api/v2/config: the runner's effective configuration (this file after defaults, by
             * section), as Airflow's webserver.expose_config. false answers 403 (Airflow's default);
             * non-sensitive-only shows it with every secret-looking option masked. Secrets are never
             * shown, so Airflow's True is refused rather than faked. */
            expose_config: z
              .preprocess(
                (v) => (typeof v === "boolean" ? String(v) : typeof v === "string" ? v.toLowerCase() : v),
                z.enum(["false", "non-sensitive-only"], { error: "runner.api.expose_config is false or non-sensitive-only (secrets are never shown, so true is not offered)" }),
              )
              .default("false"),
          })
          .strict()
          .default({ test_connection: "disabled", expose_config: "false" }),
      })
      .strict(),
    /** The Kafka → ClickHouse loader service (src/loader/main.ts, docs/loader.md). */
    loader: z
      .object({
        /** Address /health and /metrics listen on: bind_host locally, 0.0.0.0 inside a container. */
        listen_host: z.string().min(1).optional(),
        /** Loopback HTTP port of the first instance's /health and /metrics; instance k's is port + k - 1. */
        port,
        /** Loader processes on this stand: each joins the consumer groups, Kafka splits the partitions. */
        instances: z.number().int().min(1).max(8).default(1),
        /** Loader options (src/config/loader.ts): flush limits, message size limit, backoff. */
        options: loaderConfigSchema.optional(),
        /** Serve /fail-points: pause points a fault test arms to hold a flush cycle at an exact
         * moment (src/loader/pause-points.ts). The test stand only; refused in stand.yaml. */
        fail_points: z.boolean().optional(),
      })
      .strict(),
    /**
     * The stand's keeper (src/keeper/policy.ts): restarts a service that died or stopped serving
     * while it is wanted up, with backoff, and marks one that keeps dying as crash-looping. Absent:
     * nothing restarts the services (docker compose has its own restart policies).
     */
    keeper: z
      .object({
        /** Loopback HTTP port of its /health, /status and /metrics. */
        port,
        /** A live process that does not serve this long (after its start-up time) is stopped and started again. */
        hung_after_seconds: z.number().int().min(5).max(3600).default(45),
        /** Quick deaths in a row (each within healthy_after_seconds of its start) that make a service crash-looping. */
        restart_limit: z.number().int().min(1).max(100).default(5),
        /** A process serving this long after its start counts as a good start: its quick deaths start again from 0. */
        healthy_after_seconds: z.number().int().min(1).max(3600).default(60),
        /** The longest wait between two restarts (the backoff doubles from 1 s up to this). */
        max_backoff_seconds: z.number().int().min(1).max(600).default(30),
        /** `stand up` starts the keeper (the test stand says false: its fault tests want a fault to stay; the keeper's own tests start it). */
        autostart: z.boolean().default(true),
        /** Honour fail points (<state_dir>/keeper/fail-points/<service>: its next starts exit at once). Test stand only. */
        fail_points: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /**
     * Prometheus (Debian's package) as a stand service: scrapes the runner, the loader, the keeper
     * and itself, keeps their history, and evaluates the stand's alerting rules
     * (src/addons/prometheus.ts, docs/stand.md "Prometheus"). Absent: no Prometheus.
     */
    prometheus: z
      .object({
        /** Loopback port of its web UI and HTTP API. */
        port,
        /** Where the runner reaches it when not on bind_host (its service name in a compose network). */
        host,
        /** How long samples are kept (Prometheus's --storage.tsdb.retention.time). */
        retention_time: z.string().regex(/^\d+[smhdwy]$/, "prometheus.retention_time is a duration like 7d").default("7d"),
        /** The most disk the samples may take (--storage.tsdb.retention.size). */
        retention_size: z.string().regex(/^\d+(B|KB|MB|GB|TB)$/, "prometheus.retention_size is a size like 512MB").default("512MB"),
        /** How often each target is scraped and the rules evaluated. */
        scrape_interval_seconds: z.number().int().min(1).max(300).default(15),
        /** How long a condition that says "for a while" (lag growing, rows held, a target down) must hold before its alert fires. */
        alert_after_seconds: z.number().int().min(1).max(3600).default(300),
      })
      .strict()
      .optional(),
    /**
     * Superset, the BI tool, on the stand's marts (src/addons/superset.ts, docs/stand.md "A BI tool"):
     * optional, started by `make bi` only (never by `make up`), from the pinned virtualenv .venv-bi.
     * It reads ClickHouse as the `reader` account. Absent: no `make bi`.
     */
    bi: z
      .object({
        /** Loopback port of Superset's web UI and REST API. */
        port,
        /** Superset's own login (its metadata lives in <state_dir>/bi/superset.db). */
        admin: z.object({ username: z.string().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, "bi.admin.username: letters, digits, _ . -"), password: z.string().min(8) }).strict(),
        /** Flask's SECRET_KEY: signs sessions and encrypts the saved ClickHouse password. */
        secret_key: z.string().min(32, "bi.secret_key needs at least 32 characters"),
      })
      .strict()
      .optional(),
    /**
     * World snapshots (world_snapshot / world_restore, docs/world.md "Snapshots"): saved under
     * <state_dir>/snapshots. Absent: the defaults below.
     */
    snapshots: z
      .object({
        /** Bytes that must stay free on the state directory's disk after a save or a restore copies its files. */
        min_free_bytes: z.number().int().min(0).default(512 * 1024 * 1024),
        /** Honour fail points (<state_dir>/snapshots/.fail-points/free-bytes: the disk's free bytes as the
         * checks see them, to stage a full disk). Test stand only. */
        fail_points: z.boolean().optional(),
      })
      .strict()
      .default({ min_free_bytes: 512 * 1024 * 1024 }),
    /**
     * The world this stand plays (docs/world.md): its size picks the generator's --size and the
     * passport the DAGs wait on (canonical: data/world-inventory.json; small, the test stands':
     * data/world-inventory.small.json). Absent: canonical.
     */
    world: z.object({ size: worldSize.default("canonical") }).strict().default({ size: "canonical" }),
  })
  .strict();

export type StandConfig = z.infer<typeof standConfigSchema>;
export type ClickHouseNodeConfig = z.infer<typeof clickhouseNode>;
/** The BI add-on's section (Superset), when the stand has one. */
export type BiConfig = NonNullable<StandConfig["bi"]>;

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Parses and validates a stand config document; errors name the file and every bad field. */
export function parseStandConfig(text: string, file: string): StandConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML: ${errorMessage(err)}`, file);
  }
  const result = standConfigSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`)
      .join("\n");
    throw new ConfigError(`${file}: invalid stand config:\n${problems}`, file);
  }
  if (path.resolve(file) === path.join(repoRoot, "stand.yaml")) {
    const armed = [
      result.data.runner.fail_points === true ? "runner.fail_points" : "",
      result.data.loader.fail_points === true ? "loader.fail_points" : "",
      result.data.keeper?.fail_points === true ? "keeper.fail_points" : "",
      result.data.snapshots.fail_points === true ? "snapshots.fail_points" : "",
    ].filter(Boolean);
    if (armed.length > 0) {
      throw new ConfigError(`${file}: ${armed.join(" and ")}: fail points let a test fail or hold the user's runs and loader at will; they belong in the test stand's config (test/stand.test.yaml), never in stand.yaml`, file);
    }
  }
  const ports = collectPorts(result.data);
  const dup = ports.find((p, i) => ports.indexOf(p) !== i);
  if (dup !== undefined) throw new ConfigError(`${file}: port ${dup} is used twice`, file);
  return result.data;
}

/** Every port the stand's processes listen on. */
export function collectPorts(c: StandConfig): number[] {
  return [
    c.postgres.port,
    c.zookeeper.port,
    c.kafka.port,
    c.kafka.controller_port,
    ...instancesOf(c, "runner").map((i) => i.port),
    ...instancesOf(c, "loader").map((i) => i.port),
    ...(c.keeper ? [c.keeper.port] : []),
    ...(c.prometheus ? [c.prometheus.port] : []),
    ...(c.bi ? [c.bi.port] : []),
    ...c.clickhouse.nodes.flatMap((n) => [n.http_port, n.tcp_port, n.interserver_port]),
  ];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

let cached: StandConfig | undefined;

/** The stand config file in force: $STAND_CONFIG or stand.yaml at the repository root. */
export function standConfigPath(): string {
  const override = process.env.STAND_CONFIG;
  return override ? path.resolve(override) : path.join(repoRoot, "stand.yaml");
}

export function loadStandConfig(): StandConfig {
  if (cached) return cached;
  const file = standConfigPath();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read stand config ${file}: ${errorMessage(err)}`, file);
  }
  cached = deepFreeze(withWorldSizeOverride(parseStandConfig(text, file), file));
  return cached;
}

/**
 * STAND_WORLD_SIZE overrides world.size for this process and the services it starts (make bench
 * measures the canonical world on the test stand, whose file says small).
 */
function withWorldSizeOverride(config: StandConfig, file: string): StandConfig {
  const override = process.env.STAND_WORLD_SIZE;
  if (override === undefined || override === "") return config;
  const size = worldSize.safeParse(override);
  if (!size.success) throw new ConfigError(`STAND_WORLD_SIZE=${override}: must be one of ${WORLD_SIZE_NAMES.join(", ")} (it overrides world.size of ${file})`, file);
  return { ...config, world: { size: size.data } };
}

/** Absolute path of the stand's state directory (data, logs, pid files). */
export function stateDir(config: StandConfig = loadStandConfig()): string {
  return path.resolve(repoRoot, config.state_dir);
}

/** Process-level switches that are not part of the stand file. */
export const processEnv = Object.freeze({
  logLevel: process.env.LOG_LEVEL ?? "info",
  ci: process.env.CI === "true",
  /** FC_SEED: the seed a property-based test runs with (reproduces a failed run it printed). */
  fuzzSeed: process.env.FC_SEED === undefined || process.env.FC_SEED === "" ? undefined : Number(process.env.FC_SEED),
  /** TEST_WALL_STARTED: when this make test run began (epoch seconds; scripts/run-tests.sh), if it is one. */
  /** STAND_INSTANCE: which runner or loader instance this process is (1-based; src/config/stand.ts currentInstance). */
  instance: process.env.STAND_INSTANCE,
  testRunStartedMs: /^\d+$/.test(process.env.TEST_WALL_STARTED ?? "") ? Number(process.env.TEST_WALL_STARTED) * 1000 : undefined,
  /** TEST_SEED, TEST_TIER, TEST_POINTS: which points of the test matrices run (checked in testkit/matrix.ts). */
  testMatrix: { TEST_SEED: process.env.TEST_SEED, TEST_TIER: process.env.TEST_TIER, TEST_POINTS: process.env.TEST_POINTS },
});

export function postgresUrl(database: string, config: StandConfig = loadStandConfig()): string {
  const pg = config.postgres;
  return `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${pg.host ?? config.bind_host}:${pg.port}/${encodeURIComponent(database)}`;
}

/** Where clients reach the Kafka broker (host:port). */
export function kafkaBroker(config: StandConfig = loadStandConfig()): string {
  return `${config.kafka.host ?? config.bind_host}:${config.kafka.port}`;
}

/** Where clients reach a ClickHouse node over HTTP. */
export function clickhouseHttpUrl(node: ClickHouseNodeConfig, config: StandConfig = loadStandConfig()): string {
  return `http://${node.host ?? config.bind_host}:${node.http_port}`;
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The address the runner's API listens on. */
export function apiListenHost(config: StandConfig = loadStandConfig()): string {
  return config.runner.listen_host ?? config.bind_host;
}

/** The address the loader's /health and /metrics listen on. */
export function loaderListenHost(config: StandConfig = loadStandConfig()): string {
  return config.loader.listen_host ?? config.bind_host;
}

/** Base URL of the runner's REST API as a local client sees it (the first instance's, or `instance`'s). */
export function apiBaseUrl(config: StandConfig = loadStandConfig(), instance: number = 1): string {
  return `http://${config.bind_host}:${poolInstance(config, "runner", instance).port}`;
}

/** The two kinds of our own processes a stand may run several of (runner.instances, loader.instances). */
export type PoolKind = "runner" | "loader";

/** One process of a pool: its 1-based index, its service name and the port it listens on. */
export interface PoolInstance {
  kind: PoolKind;
  index: number;
  /** The first keeps the kind's own name (its state directory and pid file as before pools); then runner-2, loader-2, … */
  name: string;
  port: number;
}

export function poolInstance(config: StandConfig, kind: PoolKind, index: number): PoolInstance {
  const base = kind === "runner" ? config.runner.api_port : config.loader.port;
  return { kind, index, name: index === 1 ? kind : `${kind}-${index}`, port: base + index - 1 };
}

/** Every configured instance of a pool, the first first. */
export function instancesOf(config: StandConfig, kind: PoolKind): PoolInstance[] {
  const count = kind === "runner" ? config.runner.instances : config.loader.instances;
  return Array.from({ length: count }, (_, i) => poolInstance(config, kind, i + 1));
}

/**
 * Which instance this process is: $STAND_INSTANCE (set by the stand for every instance it starts),
 * the first when unset. A value the config does not have is an error naming both.
 */
export function currentInstance(config: StandConfig, kind: PoolKind): PoolInstance {
  const raw = processEnv.instance;
  if (raw === undefined || raw === "") return poolInstance(config, kind, 1);
  const count = instancesOf(config, kind).length;
  const index = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(index >= 1 && index <= count)) {
    throw new ConfigError(`STAND_INSTANCE=${raw}: ${standConfigPath()} has ${count} ${kind} instance(s) (${kind}.instances); give 1..${count}`, standConfigPath());
  }
  return poolInstance(config, kind, index);
}
