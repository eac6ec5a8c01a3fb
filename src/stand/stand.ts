// The local-process stand as a whole: which services, in which order, and the up/down/status/clean
// operations the CLI exposes. Start order follows dependencies: ClickHouse needs ZooKeeper, and the
// loader (our own process, src/stand/loader-service.ts) needs Postgres, Kafka and ClickHouse, so it
// starts last and stops first.
import { rmSync } from "node:fs";
import path from "node:path";
import { loadStandConfig, repoRoot } from "../config/stand.ts";
import { clickhouseNodeService } from "./clickhouse.ts";
import { kafkaService } from "./kafka.ts";
import { ensureLoader, loaderStatus, stopLoader } from "./loader-service.ts";
import { standPaths } from "./paths.ts";
import { postgresService, removeExternalDataDir } from "./postgres.ts";
import { launchIfNeeded, serviceStatus, waitUntilHealthy, type ServiceDefinition, type ServiceStatus, type StandContext } from "./service.ts";
import { Supervisor } from "./supervisor.ts";
import { zookeeperService } from "./zookeeper.ts";

export function standContext(print: (line: string) => void = (line) => console.log(line)): StandContext {
  const config = loadStandConfig();
  const paths = standPaths(config);
  return { config, paths, supervisor: new Supervisor(paths.pids), print };
}

/** Services in start groups: a group is launched together, then waited for together. */
export function serviceGroups(ctx: StandContext): ServiceDefinition[][] {
  return [
    [postgresService(ctx)],
    [zookeeperService(ctx)],
    ctx.config.clickhouse.nodes.map((node) => clickhouseNodeService(ctx, node)),
    [kafkaService(ctx)],
  ];
}

export async function standUp(ctx: StandContext): Promise<void> {
  const started = Date.now();
  for (const group of serviceGroups(ctx)) {
    for (const service of group) await launchIfNeeded(ctx, service);
    await Promise.all(group.map((service) => waitUntilHealthy(ctx, service)));
  }
  await ensureLoader(ctx);
  ctx.print(`stand is up (${((Date.now() - started) / 1000).toFixed(1)} s); state in ${ctx.paths.root}`);
}

/** Stops every service we started, last-started first. Never touches a process without our pid file. */
export async function standDown(ctx: StandContext): Promise<void> {
  await stopLoader(ctx);
  const services = serviceGroups(ctx).flat().reverse();
  for (const service of services) {
    const outcome = await ctx.supervisor.stop(service.name, service.stopSignal, service.stopGraceMs);
    ctx.print(`${service.name}: ${outcome === "killed" ? `killed (did not stop within ${service.stopGraceMs / 1000} s)` : outcome}`);
  }
}

export async function standStatus(ctx: StandContext): Promise<ServiceStatus[]> {
  return Promise.all([...serviceGroups(ctx).flat().map((service) => serviceStatus(ctx, service)), loaderStatus(ctx)]);
}

/** Stops the stand, then removes all its state: data, logs, generated configs, the Kafka jars. */
export async function standClean(ctx: StandContext): Promise<void> {
  await standDown(ctx);
  const root = ctx.paths.root;
  // guard against a state_dir that points at something we must never delete
  if (root === path.parse(root).root || root === repoRoot || repoRoot.startsWith(root + path.sep)) {
    throw new Error(`refusing to remove state dir ${root}: it is / or contains the repository`);
  }
  removeExternalDataDir(ctx.paths);
  rmSync(root, { recursive: true, force: true });
  ctx.print(`removed ${root}`);
}
