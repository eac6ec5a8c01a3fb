// The keeper process: `stand up` starts it last (src/keeper/keeper-service.ts); it looks at every
// stand service each second and restarts what died or stopped serving while wanted up
// (src/keeper/policy.ts has the rule). It serves GET /health, GET /status (the records) and
// GET /metrics on 127.0.0.1:keeper.port, and writes <state_dir>/keeper/state.json after each look.
// SIGTERM/SIGINT: finish the current look, exit 0; what it started keeps running.
import { createServer, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { errorMessage } from "../errors.ts";
import { Keeper, KEEPER_SERVICE, readKeeperStateFile, writeKeeperState, type KeeperStateFile, keptServices } from "../keeper/index.ts";
import { keptInfrastructure, standContext } from "./stand.ts";
import { fileURLToPath } from "node:url";
import path from "node:path";

const TICK_MS = 1000;
/** Runs the keeper until SIGTERM/SIGINT: importing this module starts nothing. */
export async function main(): Promise<void> {
  const logger = pino({ base: { service: KEEPER_SERVICE } });
  const ctx = standContext((line) => logger.info(line));
  const keeperConfig = ctx.config.keeper;
  if (!keeperConfig) {
    logger.fatal("the stand config has no keeper section; nothing to do");
    process.exit(2);
  }

  const startedAt = new Date().toISOString();
  const keeper = new Keeper(
    keptServices(ctx, keptInfrastructure(ctx)),
    {
      hungAfterMs: keeperConfig.hung_after_seconds * 1000,
      restartLimit: keeperConfig.restart_limit,
      healthyAfterMs: keeperConfig.healthy_after_seconds * 1000,
      maxBackoffMs: keeperConfig.max_backoff_seconds * 1000,
      startupMs: ctx.config.health_timeout_seconds * 1000,
      log: (level, message, fields) => logger[level](fields, message),
    },
    readKeeperStateFile(ctx)?.services ?? [],
  );

  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "keeper_process_" });
  const restartsGauge = new Gauge({ name: "stand_service_restarts", help: "Starts of a stand service by the keeper since the stand's state began", labelNames: ["service"], registers: [registry] });
  const upGauge = new Gauge({ name: "stand_service_up", help: "1 while the service's process is alive and serves", labelNames: ["service"], registers: [registry] });
  const loopingGauge = new Gauge({ name: "stand_service_crash_looping", help: "1 while the service is crash-looping (left down)", labelNames: ["service"], registers: [registry] });

  let current: KeeperStateFile = { keeper: { pid: process.pid, startedAt, tickAt: startedAt }, services: keeper.records() };
  let stopping = false;

  function answer(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/health") {
      const ageMs = Date.now() - Date.parse(current.keeper.tickAt);
      const healthy = !stopping && ageMs < 15_000;
      const looping = current.services.filter((s) => s.state === "crash-looping").map((s) => s.service);
      answer(res, healthy ? 200 : 503, { status: healthy ? "healthy" : "unhealthy", pid: process.pid, tick_at: current.keeper.tickAt, crash_looping: looping });
    } else if (req.method === "GET" && req.url === "/status") {
      answer(res, 200, current);
    } else if (req.method === "GET" && req.url === "/metrics") {
      void registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(text);
      });
    } else {
      answer(res, 404, { detail: `no route ${req.method ?? "?"} ${req.url ?? "?"}; the keeper serves GET /health, /status and /metrics` });
    }
  });

  async function loop(): Promise<void> {
    while (!stopping) {
      try {
        const services = await keeper.tick();
        current = { keeper: { pid: process.pid, startedAt, tickAt: new Date().toISOString() }, services };
        writeKeeperState(ctx, current);
        for (const s of services) {
          restartsGauge.set({ service: s.service }, s.restarts);
          upGauge.set({ service: s.service }, s.state === "up" ? 1 : 0);
          loopingGauge.set({ service: s.service }, s.state === "crash-looping" ? 1 : 0);
        }
      } catch (err) {
        logger.error({ err: errorMessage(err) }, "keeper: a look at the stand failed; trying again");
      }
      await sleep(TICK_MS);
    }
  }

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      logger.info({ signal }, "keeper stopping; the services it watched keep running");
      stopping = true;
    });
  }

  server.on("error", (err) => {
    logger.fatal({ err: errorMessage(err) }, `keeper: cannot listen on ${ctx.config.bind_host}:${keeperConfig.port}`);
    process.exit(1);
  });
  server.listen(keeperConfig.port, ctx.config.bind_host, () => logger.info({ port: keeperConfig.port }, "keeper watching the stand"));
  await loop();
  server.close();
  process.exit(0);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
