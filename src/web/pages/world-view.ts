// The World page's view model (also GET /ui/data/world and GET /api/v2/world/summary): the position
// and its history and the world's active runs from RunnerService, the numbers from ClickHouse and
// the offsets from Kafka through the sources src/server wires in, and the schema status. Every part
// is read on its own and carries its own error: a ClickHouse or Kafka that does not answer is shown
// as such, the page never fails for it.
import type { SnapshotSummary } from "../../snapshots/index.ts";
import { z } from "zod";
import { DagNotFoundError, VariableNotFoundError, type RunnerService, type VariableChange } from "../../runner/index.ts";
import { coerceError } from "../../errors.ts";
import type { PartitionOffsets } from "../kafka-lag.ts";
import type { MetricsHistoryView } from "../metrics-history.ts";
import { WORLD_DAG_IDS, WORLD_POSITION_KEY } from "../../world/index.ts";
import type { DailySeries, DqResults, Part, WorldNumbers } from "../world-summary.ts";
import { webPaths } from "../html.ts";
import type { SchemaStatusSource } from "./schema-status.ts";

export type { Part } from "../world-summary.ts";

export const WORLD_DAYS_DEFAULT = 60;
export const worldQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(WORLD_DAYS_DEFAULT) });

/** Where the page's numbers come from (src/server wires the stand's ClickHouse and Kafka). */
export interface WorldSources {
  numbers: (days: number) => Promise<WorldNumbers>;
  kafka: () => Promise<PartitionOffsets[]>;
  schema?: SchemaStatusSource;
  /** The stand's services as check-services sees them (the local-process stand; absent elsewhere). */
  services?: () => Promise<ServiceView[]>;
  /** The world snapshots under the stand's state directory and the last restores (local-process stand). */
  snapshots?: () => Promise<SnapshotsView>;
  /** The last hour of lag and rows placed from the stand's Prometheus (absent: no Prometheus wired in). */
  metrics?: () => Promise<MetricsHistoryView>;
  /** Longest wait for ClickHouse or Kafka before the part is shown as not answering. */
  timeoutMs?: number;
}

export interface PositionChangeView {
  changedAt: string;
  oldValue: string | null;
  newValue: string | null;
  changedBy: string;
  run: { dagId: string; runId: string; href: string } | null;
}

export interface WorldSchemaView {
  status: string;
  drift: boolean;
  note: string | null;
  summary: Record<string, number>;
}

export interface WorldRunView {
  dagId: string;
  runId: string;
  state: string;
  href: string;
}

export interface WorldView {
  generatedAt: string;
  days: number;
  /** A world DAG has a queued or running run: the page refreshes itself. */
  active: boolean;
  activeRuns: WorldRunView[];
  position: Part<{ value: string | null; history: PositionChangeView[] }>;
  layers: Part<DailySeries>;
  errors: Part<DailySeries>;
  classes: Part<DailySeries>;
  dq: Part<DqResults>;
  kafka: Part<PartitionOffsets[]>;
  /** null: this server has no world wired in. */
  schema: Part<WorldSchemaView> | null;
  /** null: no stand services wired in (the runner is not the local stand's). */
  services: Part<ServiceView[]> | null;
  /** null: no snapshot store wired in. */
  snapshots: Part<SnapshotsView> | null;
  /** null: no Prometheus wired in. */
  metrics: Part<MetricsHistoryView> | null;
}

/** One world snapshot on the World page and in GET /api/v2/world/snapshots. */
export type SnapshotView = SnapshotSummary;

export interface RestoreView {
  snapshot: string;
  fromPosition: string | null;
  toPosition: number;
  runId: string;
  restoredAt: string | null;
}

export interface SnapshotsView {
  snapshots: SnapshotView[];
  restores: RestoreView[];
}

/** One stand service on the World page: its health, and the keeper's record of it. */
export interface ServiceView {
  name: string;
  healthy: boolean;
  detail: string;
  /** The keeper's state (up, restarting, crash-looping, stopped, …), null when no keeper looked at it. */
  state: string | null;
  restarts: number | null;
  lastExit: string | null;
}

const schemaShape = z.looseObject({
  status: z.string(),
  drift: z.boolean(),
  note: z.string().nullish(),
  summary: z.record(z.string(), z.number()).optional(),
});

const notWired = (what: string): Part<never> => ({ ok: false, error: `${what}: this server has no world wired in` });

/**
 * The sources with each answer kept for `ttlMs` and shared by callers meanwhile: a refreshing page
 * asks for its JSON twin and then its HTML, and the schema status (DDL checksums, both nodes'
 * catalogues) changes only when the world is rebuilt. A failed answer is not kept.
 */
export function sharedWorldSources(sources: WorldSources, ttlMs: number): WorldSources {
  const memo = <A extends unknown[], T>(read: (...args: A) => Promise<T>): ((...args: A) => Promise<T>) => {
    const kept = new Map<string, { at: number; value: Promise<T> }>();
    return (...args: A) => {
      const key = JSON.stringify(args);
      const hit = kept.get(key);
      if (hit && Date.now() - hit.at < ttlMs) return hit.value;
      const value = read(...args);
      kept.set(key, { at: Date.now(), value });
      value.catch(() => kept.delete(key));
      return value;
    };
  };
  return {
    ...sources,
    numbers: memo(sources.numbers),
    kafka: memo(sources.kafka),
    schema: sources.schema ? memo(sources.schema) : undefined,
    services: sources.services ? memo(sources.services) : undefined,
    snapshots: sources.snapshots ? memo(sources.snapshots) : undefined,
    metrics: sources.metrics ? memo(sources.metrics) : undefined,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function part<T>(read: () => Promise<T>): Promise<Part<T>> {
  try {
    return { ok: true, data: await read() };
  } catch (err) {
    return { ok: false, error: coerceError(err).message };
  }
}

function changeView(change: VariableChange): PositionChangeView {
  return {
    changedAt: change.changedAt.toISOString(),
    oldValue: change.oldValue,
    newValue: change.newValue,
    changedBy: change.changedBy,
    run: change.dagId && change.runId ? { dagId: change.dagId, runId: change.runId, href: webPaths.run(change.dagId, change.runId) } : null,
  };
}

async function readPosition(runner: RunnerService): Promise<{ value: string | null; history: PositionChangeView[] }> {
  const value = await runner.getVariable(WORLD_POSITION_KEY).then(
    (v) => v.value,
    (err: unknown) => {
      if (err instanceof VariableNotFoundError) return null;
      throw err;
    },
  );
  const history = await runner.variableHistory(WORLD_POSITION_KEY);
  return { value, history: history.map(changeView).sort((a, b) => a.changedAt.localeCompare(b.changedAt)) };
}

/** Queued and running runs of the world's DAGs (those this runner has). */
async function activeWorldRuns(runner: RunnerService): Promise<WorldRunView[]> {
  const perDag = await Promise.all(
    WORLD_DAG_IDS.map((dagId) =>
      runner.listRuns(dagId, { limit: 5, offset: 0, state: ["queued", "running"] }).then(
        (page) => page.items,
        (err: unknown) => {
          if (err instanceof DagNotFoundError) return [];
          throw err;
        },
      ),
    ),
  );
  return perDag.flat().map((run) => ({ dagId: run.dagId, runId: run.runId, state: run.state, href: webPaths.run(run.dagId, run.runId) }));
}

async function readSchema(source: SchemaStatusSource): Promise<WorldSchemaView> {
  const status = schemaShape.parse(await source());
  return { status: status.status, drift: status.drift, note: status.note ?? null, summary: status.summary ?? {} };
}

export async function buildWorldView(runner: RunnerService, sources: WorldSources | undefined, days: number): Promise<WorldView> {
  const timeoutMs = sources?.timeoutMs ?? 6000;
  const allFailed = (failed: Part<never>): WorldNumbers => ({ layers: failed, errors: failed, classes: failed, dq: failed });
  const numbersPromise = sources
    ? withTimeout(sources.numbers(days), timeoutMs, "ClickHouse").catch((err: unknown) =>
        allFailed({ ok: false, error: `ClickHouse did not answer: ${coerceError(err).message}` }),
      )
    : Promise.resolve(allFailed(notWired("ClickHouse")));
  const schemaSource = sources?.schema;
  const servicesSource = sources?.services;
  const snapshotsSource = sources?.snapshots;
  const metricsSource = sources?.metrics;
  const [activeRuns, position, numbers, kafka, schema, services, snapshots, metrics] = await Promise.all([
    activeWorldRuns(runner),
    part(() => readPosition(runner)),
    numbersPromise,
    sources ? part(() => withTimeout(sources.kafka(), timeoutMs, "Kafka")) : Promise.resolve(notWired("Kafka")),
    schemaSource ? part(() => readSchema(schemaSource)) : Promise.resolve(null),
    servicesSource ? part(() => withTimeout(servicesSource(), timeoutMs, "the stand's services")) : Promise.resolve(null),
    snapshotsSource ? part(() => withTimeout(snapshotsSource(), timeoutMs, "the snapshot store")) : Promise.resolve(null),
    metricsSource ? part(() => withTimeout(metricsSource(), timeoutMs, "Prometheus")) : Promise.resolve(null),
  ]);
  return {
    generatedAt: new Date().toISOString(),
    days,
    active: activeRuns.length > 0,
    activeRuns,
    position,
    ...numbers,
    kafka,
    schema,
    services,
    snapshots,
    metrics,
  };
}
