// The loader service: runs with the stand (src/services/loader-service.ts starts it after Kafka and
// ClickHouse), serves GET /health and GET /metrics on 127.0.0.1:loader.port (+ k - 1 for instance k
// of loader.instances: each joins the groups, Kafka splits the partitions), and consumes the
// world's topics only while the world DAGs ask for it (loader.control, src/loader/control.ts):
// world_initialize's start_ingest after the DDL, world_recreate's stop_ingest before the groups and
// topics go. It reports the state and generation it reached in its row of loader.status every second. It
// applies its own migrations (src/loader/migrations) before it reads the control row.
// SIGTERM/SIGINT: flush what was read, commit, leave the groups, exit 0.
// loader.options are reloaded without a restart when the stand config file changes, on SIGHUP and
// on POST /reload (`make loader-reload`): reload.ts, docs/loader.md "Hot reload".
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { hostname } from "node:os";
import { pino } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { currentInstance, loadStandConfig, loaderListenHost, standConfigPath } from "../config/index.ts";
import { controlPool, loaderInstanceKey, readIngestControl, RETRY_AFTER_FAILURE_MS, writeLoaderStatus, type IngestControl, type LoaderState } from "./control.ts";
import { WorldLoader } from "./world-loader.ts";
import { PausePoints, serveFailPoints } from "./pause-points.ts";
import { coerceError, errorMessage } from "../errors.ts";
import { migrate, MigrationChangedError, SchemaTooNewError } from "../migrator.ts";
import { LOADER_MIGRATIONS } from "./migrate.ts";
import { watchConfigFile } from "./config-watch.ts";
import { describeNeedRestart, describeReload, OptionsReloader, readStandConfigFile, type ReloadOutcome, type ReloadTrigger } from "./reload.ts";
import { fileURLToPath } from "node:url";
import path from "node:path";

const CONTROL_POLL_MS = 250;
const HEARTBEAT_MS = 1000;
/** Rows held longer than this make /health say "degraded" (a sink down says so at once). */
const HELD_DEGRADED_MS = 30_000;
/** A topic's fetch loop silent this long while consuming (no batch held) has died: the consumers are restarted. */
const FETCH_STALL_MS = 60_000;

/** Starts the loader service of this process's instance (LOADER_INSTANCE): importing this module starts nothing. */
export function main(): void {
  const config = loadStandConfig();
  const instance = currentInstance(config, "loader");
  /** Its row of loader.status: which member of the group this is, on which host. */
  const memberKey = loaderInstanceKey(instance.name, hostname(), instance.port);
  const logger = pino({ base: { service: instance.name } });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "loader_process_" });
  const pausePoints = config.loader.fail_points === true ? new PausePoints() : undefined;
  const world = new WorldLoader({
    config,
    registry,
    log: { info: (l) => logger.info(l), warn: (l) => logger.warn(l), error: (l) => logger.error(l) },
    pausePoints,
    clientId: `stand-${instance.name}`,
  });
  const db = controlPool(config);
  const configFile = standConfigPath();
  const reloader = new OptionsReloader({ read: () => readStandConfigFile(configFile), started: config, running: world.loaderConfig, apply: (next) => world.reconfigure(next), metrics: world.metrics });

  /** Reads the stand config again and puts its loader options in force, or keeps the running ones and says why. */
  function reloadOptions(trigger: ReloadTrigger): ReloadOutcome {
    const outcome = reloader.reload(trigger);
    const fields = { trigger, result: outcome.result, changes: outcome.changes, ...(outcome.error === undefined ? {} : { error: outcome.error }) };
    if (outcome.result === "refused") logger.error(fields, describeReload(outcome));
    else logger.info(fields, describeReload(outcome));
    const restart = describeNeedRestart(outcome);
    if (restart !== undefined) logger.warn({ trigger, needRestart: outcome.needRestart }, restart);
    return outcome;
  }
  const configWatch = watchConfigFile(configFile, () => void reloadOptions("file"), { warn: (line) => logger.warn(line) });

  let state: LoaderState = "stopped";
  let generation = 0;
  let detail = "";
  let shuttingDown = false;
  let failedAt = 0;

  /** What the status row says while consuming: what is wrong first (the world waits print it), then each topic. */
  function consumingDetail(): string {
    const problems = world.problems(Date.now(), HELD_DEGRADED_MS);
    return problems.length > 0 ? `DEGRADED: ${problems.join("; ")} | ${world.describe()}` : world.describe();
  }

  async function report(): Promise<void> {
    world.metrics.state.reset();
    world.metrics.state.set({ state }, 1);
    await writeLoaderStatus(db, { instance: memberKey, state, generation, pid: process.pid, detail: state === "consuming" ? consumingDetail() : detail });
  }

  async function reconcile(control: IngestControl): Promise<void> {
    if (control.desired === "consuming" && !world.running) {
      if (state === "failed" && control.generation === generation && Date.now() - failedAt < RETRY_AFTER_FAILURE_MS) return;
      state = "starting";
      generation = control.generation;
      detail = "";
      await report();
      try {
        await world.start();
        state = "consuming";
        logger.info({ generation, requestedBy: control.requestedBy }, "consuming");
      } catch (err) {
        state = "failed";
        failedAt = Date.now();
        detail = `could not start consuming: ${errorMessage(err)}; retrying every ${RETRY_AFTER_FAILURE_MS / 1000} s`;
        logger.error({ err, generation }, "start failed");
      }
      await report();
    } else if (control.desired === "stopped" && (world.running || state !== "stopped")) {
      state = "stopping";
      generation = control.generation;
      await report();
      await stopWorld();
      logger.info({ generation, requestedBy: control.requestedBy }, "stopped");
      await report();
    } else if (control.generation !== generation && (state === "consuming" || state === "stopped")) {
      // a repeated request for the state already reached: acknowledge it
      generation = control.generation;
      await report();
    }
  }

  /**
   * The loader's own answer to a consumer that stopped reading without a word (TopicLoader.fetchSilenceMs;
   * seen after Kafka was stopped for 10 s during a step: the group joined, no fetch, the step waiting
   * for ever): stop the consumers (flush, commit, leave) and start them again at once, saying why.
   */
  async function restartStalledConsumers(): Promise<void> {
    if (state !== "consuming") return;
    const stall = world.fetchStall(Date.now(), FETCH_STALL_MS);
    if (stall === undefined) return;
    const why = `the consumer of ${stall.topic} had not fetched for ${Math.round(stall.silentMs / 1000)} s while consuming (its fetch loop died); restarted the consumers`;
    logger.error({ topic: stall.topic, silentMs: stall.silentMs, generation }, why);
    world.metrics.consumerRestarts.inc({ topic: stall.topic });
    await stopWorld();
    state = "failed";
    failedAt = 0; // start again at the next look, not after the failure pause
    detail = why;
    await report();
  }

  async function stopWorld(): Promise<void> {
    try {
      await world.stop();
      state = "stopped";
      detail = "";
    } catch (err) {
      state = "stopped";
      detail = `stopped with an error: ${errorMessage(err)}`;
      logger.error({ err }, "stop failed");
    }
  }

  // The heartbeat has its own timer: a start that waits for a group join (30 s after a crashed
  // member) must not look like a dead service to the tasks waiting on loader.status.
  const heartbeat = setInterval(() => {
    if (!shuttingDown) void report().catch(() => undefined);
  }, HEARTBEAT_MS);

  /** Says a recurring problem once, and again when it changes, a minute has passed, or it went away and came back. */
  function problemReporter(message: string): { warn(err: unknown): void; cleared(): void } {
    let lastProblem = "";
    let lastProblemAt = 0;
    return {
      warn(err) {
        const problem = errorMessage(err);
        if (problem !== lastProblem || Date.now() - lastProblemAt > 60_000) {
          logger.warn({ err: problem }, message);
          lastProblem = problem;
          lastProblemAt = Date.now();
        }
      },
      cleared() {
        lastProblem = "";
      },
    };
  }

  /** The loader's own tables, before anything reads them (the runner applies the same set; the set's
   * lock makes whichever comes second a no-op). Postgres away: asked again soon. A database whose
   * loader migrations are not this code's (an applied file changed, or a newer schema): false. */
  async function applyLoaderMigrations(): Promise<boolean> {
    const problems = problemReporter(`loader migrations not applied yet; trying again every ${CONTROL_POLL_MS} ms`);
    while (!shuttingDown) {
      try {
        const applied = await migrate(db, LOADER_MIGRATIONS);
        if (applied.length > 0) logger.info({ applied }, "loader migrations applied");
        return true;
      } catch (err) {
        if (err instanceof MigrationChangedError || err instanceof SchemaTooNewError) {
          logger.fatal({ err: coerceError(err) }, "loader did not start");
          return false;
        }
        problems.warn(err);
      }
      await new Promise((resolve) => setTimeout(resolve, CONTROL_POLL_MS));
    }
    return false;
  }

  async function controlLoop(): Promise<void> {
    if (!(await applyLoaderMigrations())) {
      if (!shuttingDown) await shutdown("its migrations refused this database", 1);
      return;
    }
    const problems = problemReporter(`control row not readable; asking again every ${CONTROL_POLL_MS} ms`);
    while (!shuttingDown) {
      try {
        await restartStalledConsumers();
        await reconcile(await readIngestControl(db));
        problems.cleared();
      } catch (err) {
        // Postgres away: keep doing what we do, ask again soon (said once a minute)
        problems.warn(err);
      }
      await new Promise((resolve) => setTimeout(resolve, CONTROL_POLL_MS));
    }
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === "GET" && req.url === "/metrics") {
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(await registry.metrics());
      return;
    }
    if (req.method === "GET" && req.url === "/health") {
      const alive = !shuttingDown && state !== "failed";
      // degraded: it runs, but its sink is down or rows are held (answered 200: restarting it would not help),
      // or its last reload was refused (it runs on its previous options; problems stays for rows at risk)
      const problems = state === "consuming" ? world.problems(Date.now(), HELD_DEGRADED_MS) : [];
      const reload = reloader.status();
      const status = !alive ? "unhealthy" : problems.length > 0 || reload?.ok === false ? "degraded" : "healthy";
      res.writeHead(alive ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ status, instance: memberKey, state, generation, pid: process.pid, problems, reload, detail: state === "consuming" ? world.describe() : detail }));
      return;
    }
    if (req.method === "POST" && req.url === "/reload") {
      // nothing comes with the request: the loader reads its own stand config file, as on SIGHUP
      const outcome = reloadOptions("http");
      answer(res, outcome.result === "refused" ? 422 : 200, outcome);
      return;
    }
    if (req.url === "/fail-points" || req.url?.startsWith("/fail-points/") === true) {
      await serveFailPoints(req, res, pausePoints, (line, fields) => logger.warn(fields, line));
      return;
    }
    answer(res, 404, { detail: `no route ${req.method ?? "?"} ${req.url ?? "?"}; the loader serves GET /health, GET /metrics and POST /reload` });
  }

  function answer(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      logger.error({ err }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: errorMessage(err) }));
    });
  });

  async function shutdown(signal: string, exitCode = 0): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    clearInterval(heartbeat);
    configWatch.close();
    pausePoints?.releaseAll();
    logger.info({ signal }, "stopping: flushing what was read, committing, leaving the groups");
    if (world.running) {
      state = "stopping";
      await report().catch(() => undefined);
      await stopWorld();
    }
    state = "stopped";
    await report().catch(() => undefined);
    await db.end().catch(() => undefined);
    server.close();
    logger.info("stopped");
    process.exit(exitCode);
  }

  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGHUP", () => void reloadOptions("signal"));

  const host = loaderListenHost(config);
  server.listen(instance.port, host, () => {
    logger.info({ url: `http://${host}:${instance.port}`, member: memberKey, config: configFile }, "loader service listening (/health, /metrics, POST /reload; the stand config file is watched for loader.options)");
    void controlLoop();
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main();
}
