// The local-process stand as a whole: which services, in which order, and the up/down/status/clean
// operations the CLI exposes. Start order follows dependencies: ClickHouse needs ZooKeeper, and the
// loader (our own process, src/services/loader-service.ts) needs Postgres, Kafka and ClickHouse, so it
// starts last and stops first.
import { rmSync } from "node:fs";
import path from "node:path";
import { loadStandConfig, poolInstance, repoRoot, standConfigPath } from "../config/index.ts";
import { clickhouseNodeService, kafkaService, ensureLoaders, loaderStatuses, stopLoaders, standPaths, postgresService, removeExternalDataDir, runnerHealthy, runnerInstances, runnerPid, launchIfNeeded, probedStatus, serviceStatus, waitUntilHealthy, type ServiceDefinition, type ServiceStatus, type StandContext, nodeServiceSupervisor, Supervisor, zookeeperService } from "../services/index.ts";
import { fetchedToolsVersion, writeFieldTools, supersetService, prometheusService } from "../addons/index.ts";
import { ensureKeeper, KEEPER_SERVICE, keeperSpec, readKeeperView, stopKeeper, type KeeperView, type ServiceRecord } from "../keeper/index.ts";
import { SnapshotStore } from "../snapshots/index.ts";

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
    ...(ctx.config.prometheus ? [[prometheusService(ctx, ctx.config.prometheus)]] : []),
  ];
}

export async function standUp(ctx: StandContext): Promise<void> {
  const started = Date.now();
  for (const group of serviceGroups(ctx)) {
    for (const service of group) await launchIfNeeded(ctx, service);
    await Promise.all(group.map((service) => waitUntilHealthy(ctx, service)));
  }
  await ensureLoaders(ctx);
  if (ctx.config.keeper?.autostart === true) await ensureKeeper(ctx);
  const tools = writeFieldTools(ctx.config, ctx.paths);
  const toolsVersion = fetchedToolsVersion(ctx.paths);
  ctx.print(
    toolsVersion === ctx.config.kafka.version
      ? `the field's tools (Kafka ${toolsVersion}'s kafka-*.sh, kcat, clickhouse-client, psql): source ${path.relative(repoRoot, tools.env)}`
      : `Kafka's tools are not fetched for ${ctx.config.kafka.version} (found ${toolsVersion ?? "none"}): make install fetches them`,
  );
  ctx.print(`stand is up (${((Date.now() - started) / 1000).toFixed(1)} s); state in ${ctx.paths.root}`);
}

/**
 * The services whose data is the world (ZooKeeper, the ClickHouse nodes, Kafka), stopped for a world
 * snapshot or restore: Kafka and the nodes together, ZooKeeper last. Each is held down by this
 * process (the runner): the keeper leaves it while the runner lives, and starts it again if the
 * runner dies before startWorldServices. Postgres, the runner, the keeper and the loader stay up: the caller has asked
 * the loader to stop ingesting (it flushed, committed and left its groups), so it holds nothing, and
 * keeping its process saves a start.
 */
export async function stopWorldServices(ctx: StandContext): Promise<void> {
  const [, zookeeper = [], nodes = [], kafka = []] = serviceGroups(ctx);
  // held down by this process: if it dies mid-way, the keeper finds them wanted up and starts them
  const stop = async (s: ServiceDefinition): Promise<void> => ctx.print(`${s.name}: ${await ctx.supervisor.stop(s.name, s.stopSignal, s.stopGraceMs, { holder: process.pid })}`);
  await Promise.all([...nodes, ...kafka].map(stop));
  for (const s of zookeeper) await stop(s);
}

/** Starts what stopWorldServices stopped and waits for each: ZooKeeper and Kafka at once (Kafka
 * needs nothing of the others and is the slowest to start), the nodes once ZooKeeper serves; then
 * the loaders, if they are not running. */
export async function startWorldServices(ctx: StandContext): Promise<void> {
  const [, zookeeper = [], nodes = [], kafka = []] = serviceGroups(ctx);
  for (const service of [...zookeeper, ...kafka]) await launchIfNeeded(ctx, service);
  await Promise.all(zookeeper.map((service) => waitUntilHealthy(ctx, service)));
  for (const service of nodes) await launchIfNeeded(ctx, service);
  await Promise.all([...nodes, ...kafka].map((service) => waitUntilHealthy(ctx, service)));
  await ensureLoaders(ctx);
}

/** The infrastructure the keeper keeps, in start order: what `stand up` starts, and Superset (kept once `make bi` wanted it up). */
export function keptInfrastructure(ctx: StandContext): ServiceDefinition[] {
  return [...serviceGroups(ctx).flat(), ...optionalServices(ctx)];
}

/** The world's services as a snapshot's save or restore stops and starts them (src/snapshots). */
export const WORLD_SERVICES = { stop: stopWorldServices, start: startWorldServices } as const;

/** The services `make up` does not start, only their own target: Superset (`make bi`), when configured. */
export function optionalServices(ctx: StandContext): ServiceDefinition[] {
  return ctx.config.bi ? [supersetService(ctx, ctx.config.bi)] : [];
}

/** `make bi`: Superset started (its metadata initialised the first time) and its starter dashboard in place. */
export async function biUp(ctx: StandContext): Promise<void> {
  const [superset] = optionalServices(ctx);
  if (!superset) throw new Error(`the stand config (${standConfigPath()}) has no bi section: add one as stand.yaml has it`);
  await launchIfNeeded(ctx, superset);
  await waitUntilHealthy(ctx, superset);
}

/** `make bi-down`: Superset stopped (and left stopped: the keeper does not start it again). */
export async function biDown(ctx: StandContext): Promise<void> {
  for (const service of optionalServices(ctx)) ctx.print(`${service.name}: ${await ctx.supervisor.stop(service.name, service.stopSignal, service.stopGraceMs)}`);
}

/** Stops every service we started, last-started first. Never touches a process without our pid file. */
export async function standDown(ctx: StandContext): Promise<void> {
  await stopKeeper(ctx); // first: nothing it watches may be started again behind us
  await stopLoaders(ctx);
  const services = [...optionalServices(ctx), ...serviceGroups(ctx).flat().reverse()];
  for (const service of services) {
    const outcome = await ctx.supervisor.stop(service.name, service.stopSignal, service.stopGraceMs);
    ctx.print(`${service.name}: ${outcome === "killed" ? `killed (did not stop within ${service.stopGraceMs / 1000} s)` : outcome}`);
  }
}

/** A service's health with the keeper's record of it (restarts, last exit, state), when a keeper ever looked at it. */
export interface KeptServiceStatus extends ServiceStatus {
  kept?: ServiceRecord;
}

export interface StandStatus {
  services: KeptServiceStatus[];
  /** What the keeper knows (restarts, last exits, crash-looping), and whether it is current. */
  keeper: KeeperView;
}

/**
 * Every service's health, with the keeper's record of it beside: its restarts, its last exit and,
 * when the keeper left it down, crash-looping (unhealthy, whatever its port says). The keeper's own
 * row says whether those records are current.
 */
export async function standStatus(ctx: StandContext): Promise<StandStatus> {
  const keeper = readKeeperView(ctx);
  const services: KeptServiceStatus[] = await Promise.all([
    ...serviceGroups(ctx)
      .flat()
      .map((service) => serviceStatus(ctx, service)),
    ...loaderStatuses(ctx),
    // Superset has a row once `make bi` asked for it
    ...optionalServices(ctx)
      .filter((service) => ctx.supervisor.readWant(service.name)?.want === "up" || ctx.supervisor.runningPid(service.name) !== undefined)
      .map((service) => serviceStatus(ctx, service)),
    // the runners and the keeper are not started by `stand up` alone: each has a row once it is wanted up
    ...runnerInstances(ctx)
      .map((index) => poolInstance(ctx.config, "runner", index))
      .filter((instance) => wantedUp(ctx, instance.name))
      .map((instance) => probedStatus(instance.name, instance.port, runnerPid(ctx, instance.index), async () => ({ healthy: await runnerHealthy(2000, ctx.config, instance.index) }))),
    ...(ctx.config.keeper && wantedUp(ctx, KEEPER_SERVICE)
      ? [probedStatus(KEEPER_SERVICE, ctx.config.keeper.port, keeper.pid, async () => ({ healthy: await keeperSpec(ctx).probe(), note: keeper.current ? "records current" : "records NOT current" }))]
      : []),
  ]);
  for (const status of services) {
    const record = keeper.services.find((r) => r.service === status.name);
    if (!record) continue;
    status.kept = record;
    if (record.state === "crash-looping") {
      status.healthy = false;
      status.detail = `CRASH-LOOPING: ${record.message}`;
    }
  }
  return { services, keeper };
}

/** A node service (the runner, the keeper) whose want file says up, or whose process runs. */
function wantedUp(ctx: StandContext, name: string): boolean {
  const supervisor = nodeServiceSupervisor(ctx, name);
  return supervisor.readWant(name)?.want === "up" || supervisor.runningPid(name) !== undefined;
}

/** Stops the stand, then removes all its state: data, logs, generated configs, the Kafka jars. */
export async function standClean(ctx: StandContext): Promise<void> {
  await standDown(ctx);
  const root = ctx.paths.root;
  // guard against a state_dir that points at something we must never delete
  if (root === path.parse(root).root || root === repoRoot || repoRoot.startsWith(root + path.sep)) {
    throw new Error(`refusing to remove state dir ${root}: it is / or contains the repository`);
  }
  const snapshots = new SnapshotStore(ctx.config, ctx.paths).list();
  removeExternalDataDir(ctx.paths);
  rmSync(root, { recursive: true, force: true });
  ctx.print(`removed ${root}`);
  ctx.print(
    snapshots.length === 0
      ? "no world snapshots were kept there"
      : `removed ${snapshots.length} world snapshot(s) with it: ${snapshots.map((s) => `${s.name}${s.manifest ? ` (position ${s.manifest.position})` : ` (${s.state})`}`).join(", ")}`,
  );
}
