// The loader service: runs with the stand (src/stand/loader-service.ts starts it after Kafka and
// ClickHouse), serves GET /health and GET /metrics on 127.0.0.1:loader.port, and consumes the
// world's topics only while the world DAGs ask for it (loader.control, src/loader/control.ts):
// world_initialize's start_ingest after the DDL, world_recreate's stop_ingest before the groups and
// topics go. It reports the state and generation it reached in loader.status every second.
// SIGTERM/SIGINT: flush what was read, commit, leave the groups, exit 0.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { pino } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";
import { loadStandConfig, loaderListenHost } from "../config/stand.ts";
import { controlPool, readIngestControl, writeLoaderStatus, type IngestControl, type LoaderState } from "./control.ts";
import { WorldLoader } from "./host.ts";

const CONTROL_POLL_MS = 250;
const HEARTBEAT_MS = 1000;
const RETRY_AFTER_FAILURE_MS = 5000;

const config = loadStandConfig();
const logger = pino({ base: { service: "loader" } });
const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "loader_process_" });
const world = new WorldLoader({
  config,
  registry,
  log: { info: (l) => logger.info(l), warn: (l) => logger.warn(l), error: (l) => logger.error(l) },
});
const db = controlPool(config);

let state: LoaderState = "stopped";
let generation = 0;
let detail = "";
let shuttingDown = false;
let failedAt = 0;

async function report(): Promise<void> {
  world.metrics.state.reset();
  world.metrics.state.set({ state }, 1);
  await writeLoaderStatus(db, { state, generation, pid: process.pid, detail: state === "consuming" ? world.describe() : detail });
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
      detail = `could not start consuming: ${(err as Error).message}; retrying every ${RETRY_AFTER_FAILURE_MS / 1000} s`;
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

async function stopWorld(): Promise<void> {
  try {
    await world.stop();
    state = "stopped";
    detail = "";
  } catch (err) {
    state = "stopped";
    detail = `stopped with an error: ${(err as Error).message}`;
    logger.error({ err }, "stop failed");
  }
}

// The heartbeat has its own timer: a start that waits for a group join (30 s after a crashed
// member) must not look like a dead service to the tasks waiting on loader.status.
const heartbeat = setInterval(() => {
  if (!shuttingDown) void report().catch(() => undefined);
}, HEARTBEAT_MS);

async function controlLoop(): Promise<void> {
  let lastProblem = "";
  let lastProblemAt = 0;
  while (!shuttingDown) {
    try {
      await reconcile(await readIngestControl(db));
      lastProblem = "";
    } catch (err) {
      // Postgres away or the runner's schema not there yet: keep doing what we do, ask again soon (said once a minute)
      const problem = (err as Error).message;
      if (problem !== lastProblem || Date.now() - lastProblemAt > 60_000) {
        logger.warn({ err: problem }, "control row not readable (the runner creates it: migration 000013); asking again every 250 ms");
        lastProblem = problem;
        lastProblemAt = Date.now();
      }
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
    const healthy = !shuttingDown && state !== "failed";
    res.writeHead(healthy ? 200 : 503, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: healthy ? "healthy" : "unhealthy", state, generation, pid: process.pid, detail: state === "consuming" ? world.describe() : detail }));
    return;
  }
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ detail: `no route ${req.method ?? "?"} ${req.url ?? "?"}; the loader serves GET /health and GET /metrics` }));
}

const server = createServer((req, res) => {
  serve(req, res).catch((err: unknown) => {
    logger.error({ err }, "request failed");
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ detail: (err as Error).message }));
  });
});

async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  clearInterval(heartbeat);
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
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

const host = loaderListenHost(config);
server.listen(config.loader.port, host, () => {
  logger.info({ url: `http://${host}:${config.loader.port}` }, "loader service listening (/health, /metrics)");
  void controlLoop();
});
