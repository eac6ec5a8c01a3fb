// Process entry of the runner: starts the engine, the DAG processor (the DAGs of dags/ and
// <state_dir>/dags, parsed by one runner of a pool, taken from Postgres by all) and the stand's app
// (REST API, web view, world status: app.ts) on runner.listen_host:runner.api_port; SIGTERM/SIGINT
// stop both cleanly (a second signal forces).
import { createServer, type Server } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { pino, type Logger } from "pino";
import { apiListenHost, currentInstance, loadStandConfig, postgresUrl, processEnv } from "../config/index.ts";
import { watchKeeper } from "../keeper/index.ts";
import { standContext } from "../stand/index.ts";
import { coerceError, errorCode } from "../errors.ts";
import { createRunner, DagRegistry, type Runner } from "../runner/index.ts";
import { DagProcessor } from "../dag-processor/index.ts";
import { assertOpenListenSecured, isLoopbackHost, LoginThrottle } from "../api/index.ts";
import { createStandApp } from "./app.ts";
import { dagFolders } from "./dag-folders.ts";
import { SERVER_MIGRATION_SETS } from "./migration-sets.ts";

const CLOSE_GRACE_MS = 10_000;

/** How long the API keeps an idle keep-alive connection open (see main). */
const KEEP_ALIVE_MS = 65_000;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Stops accepting, lets requests in flight finish (open waits answer at once), then drops the rest. */
async function closeServer(server: Server, logger: Logger): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // a connection whose request ends meanwhile turns idle and would be kept (a minute): close it then
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => {
    logger.warn({ graceMs: CLOSE_GRACE_MS }, "requests still open after the grace period; closing their connections");
    server.closeAllConnections();
  }, CLOSE_GRACE_MS);
  await closed;
  clearInterval(idle);
  clearTimeout(timer);
}

export interface RunningServer {
  runner: Runner;
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/** Starts the engine, then the API; if the port is taken, the engine is stopped again. */
export async function startServer(logger: Logger): Promise<RunningServer> {
  const config = loadStandConfig();
  const host = apiListenHost(config);
  const instance = currentInstance(config, "runner"); // its port: runner.api_port + index - 1
  assertOpenListenSecured(host, config.runner.api_token); // before anything starts: beyond loopback, no weak token
  const pgUrl = postgresUrl(config.postgres.runner_database, config);
  const processor = new DagProcessor({
    pgUrl,
    folders: dagFolders(config),
    parseTimeoutMs: config.runner.dags.parse_timeout_seconds * 1000,
    rescanMs: config.runner.dags.rescan_ms,
    logger: logger.child({ component: "dag-processor" }),
  });
  const runner = createRunner({
    pgUrl,
    dags: new DagRegistry([], { pending: true }),
    loadDagVersion: processor.loadVersion,
    concurrency: config.runner.worker_concurrency,
    leaseSeconds: config.runner.lease_seconds,
    failPoints: config.runner.fail_points ?? false,
    migrationSets: SERVER_MIGRATION_SETS,
    logger: logger.child({ component: "engine" }),
  });
  try {
    await runner.start();
    await processor.start(runner);
  } catch (err) {
    await processor.stop();
    await runner.stop();
    throw err;
  }

  // wrong passwords counted in Postgres, so every runner on this database counts the same guesses
  const throttlePool = new pg.Pool({ connectionString: postgresUrl(config.postgres.runner_database, config), max: 2 });
  throttlePool.on("error", (err) => logger.warn({ err }, "login throttle: idle Postgres connection failed"));
  let loginThrottle: LoginThrottle;
  try {
    loginThrottle = await LoginThrottle.inPostgres(throttlePool, config.runner.auth?.login_throttle);
  } catch (err) {
    await processor.stop();
    await runner.stop();
    await throttlePool.end();
    throw err;
  }

  const shutdown = new AbortController();
  const app = createStandApp({
    runner,
    token: config.runner.api_token,
    login: config.runner.auth && {
      jwtSecret: config.runner.auth.jwt_secret,
      tokenTtlSeconds: config.runner.auth.token_ttl_seconds,
      users: config.runner.auth.users,
    },
    loginThrottle,
    credentialsEverywhere: !isLoopbackHost(host),
    logger: logger.child({ component: "api" }),
    metricsRegistry: runner.metrics,
    shutdownSignal: shutdown.signal,
    testConnection: config.runner.api.test_connection,
    exposeConfig: config.runner.api.expose_config,
  });
  const httpServer = createServer(app);
  // A client that reuses a keep-alive connection in the instant the server closes it gets a reset,
  // and a POST cannot be retried blindly. With Node's 5 s default every pause of about 5 s between
  // two calls of one client was that instant (a test stand's runDag lost a trigger so, under load);
  // a minute moves it to pauses of a minute (undici closes an idle connection a second before the
  // hint the server sends; other clients sooner).
  httpServer.keepAliveTimeout = KEEP_ALIVE_MS;
  httpServer.headersTimeout = KEEP_ALIVE_MS + 1000;
  try {
    await listen(httpServer, instance.port, host);
  } catch (err) {
    await processor.stop();
    await runner.stop();
    await throttlePool.end();
    if (errorCode(err) === "EADDRINUSE") {
      throw new Error(`port ${host}:${instance.port} is taken (${instance.name}: runner.api_port + ${instance.index - 1}): is another runner already running?`, {
        cause: err,
      });
    }
    throw err;
  }
  const url = `http://${host}:${instance.port}`;
  logger.info({ url, instance: instance.name, dags: runner.registry.list().map((dag) => dag.id), parses: processor.isLeader }, "runner API listening");

  let stopping: Promise<void> | undefined;
  return {
    runner,
    server: httpServer,
    url,
    stop() {
      stopping ??= (async () => {
        shutdown.abort();
        await closeServer(httpServer, logger);
        await processor.stop();
        await runner.stop();
        await throttlePool.end();
      })();
      return stopping;
    },
  };
}

async function main(): Promise<void> {
  const logger = pino({ level: processEnv.logLevel, base: { service: "runner" } });
  let running: RunningServer;
  try {
    running = await startServer(logger);
  } catch (err) {
    logger.fatal({ err: coerceError(err) }, "runner did not start");
    process.exitCode = 1;
    return;
  }
  // the mutual watch: the keeper restarts this runner, and this runner restarts a keeper that died
  const keeperLog = logger.child({ component: "keeper-watch" });
  const stopKeeperWatch = watchKeeper(standContext((line) => keeperLog.info(line)), (line) => keeperLog.warn(line));
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    stopKeeperWatch();
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, "second signal: exiting without waiting");
      process.exit(1);
    }
    logger.info({ signal }, "stopping: no new requests, open waits answered, running tries finishing");
    running.stop().then(
      () => {
        logger.info("runner stopped cleanly");
        process.exitCode = 0;
      },
      (err: unknown) => {
        logger.error({ err: coerceError(err) }, "runner did not stop cleanly");
        process.exitCode = 1;
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
