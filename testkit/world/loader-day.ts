// Watching the loader while a world step plays a day (test/faults/loader-faults.test.ts): the hits
// topic's end offsets and the loader group's committed offsets per partition, sampled through the
// fault so a commit that goes backwards is seen; what one day's offset ranges left in stg, ODS and
// the dead letters; the loader's /metrics and /health.
import { setTimeout as sleep } from "node:timers/promises";
import type { Admin } from "kafkajs";
import { World, generateDay, DEFAULT_SEED } from "../../generator/src/index.ts";
import type { StandConfig } from "../../src/config/index.ts";
import { loaderBaseUrl, loaderHealth } from "../../src/services/index.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, standWorldSize } from "../../src/world/index.ts";
import { groupProgress, topicEndOffsets } from "../../src/loader/index.ts";
import { withClickHouse } from "./rest-world.ts";
import { kafkaClient } from "../stand/live-stand.ts";
import { errorMessage } from "../../src/errors.ts";

/** Offsets per partition. */
export type Offsets = ReadonlyMap<number, number>;

export function total(offsets: Offsets): number {
  return [...offsets.values()].reduce((a, b) => a + b, 0);
}

export function show(offsets: Offsets): string {
  return [...offsets].sort(([a], [b]) => a - b).map(([p, o]) => `p${p}=${o}`).join(" ");
}

// ---- what the generator plays ------------------------------------------------------------------

export interface DayExpectation {
  date: string;
  valid: number;
  invalid: number;
}

/**
 * What the generator plays for counter day `day` in the stand's world (its size: world.size);
 * deterministic, and a day does not depend on the days before it.
 */
export function expectedDay(day: number): DayExpectation {
  const hits = generateDay(new World(DEFAULT_SEED, standWorldSize()), day);
  const invalid = Object.values(hits.counts.invalid).reduce((a, b) => a + b, 0);
  return { date: hits.date, valid: hits.counts.valid, invalid };
}

// ---- offsets through a fault -------------------------------------------------------------------

export interface OffsetSample {
  at: number;
  /** End offset (high watermark) of every partition of hits. */
  ends: Offsets;
  /** What clickstream_hits has committed, per partition. */
  committed: Offsets;
}

async function sampleOffsets(admin: Admin): Promise<OffsetSample> {
  const ends = await topicEndOffsets(admin, HITS_TOPIC.name);
  const progress = await groupProgress(admin, HITS_TOPIC.name, HITS_CONSUMER_GROUP, ends);
  return { at: Date.now(), ends, committed: progress.committed };
}

/**
 * Samples the hits offsets every `intervalMs` on its own admin connection until stopped, keeping
 * every sample: `until` waits for a sample that satisfies a condition, `regressions` names every
 * commit that went below an earlier one.
 */
export class OffsetWatch {
  readonly samples: OffsetSample[] = [];
  private running = true;
  private lastError: unknown;
  private readonly loop: Promise<void>;

  private constructor(
    private readonly admin: Admin,
    private readonly intervalMs: number,
  ) {
    this.loop = this.run();
  }

  static async start(intervalMs = 50): Promise<OffsetWatch> {
    const admin = kafkaClient("loader-faults-watch").admin();
    await admin.connect();
    const watch = new OffsetWatch(admin, intervalMs);
    await watch.until("a first sample", () => true, 30_000);
    return watch;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        this.samples.push(await sampleOffsets(this.admin));
        this.lastError = undefined;
      } catch (err) {
        this.lastError = err; // the broker is never stopped here; keep trying, say it on timeout
      }
      await sleep(this.intervalMs);
    }
  }

  latest(): OffsetSample {
    const sample = this.samples.at(-1);
    if (!sample) throw new Error("no offset sample yet");
    return sample;
  }

  /** The first sample taken from now on that satisfies `ok`. */
  async until(what: string, ok: (s: OffsetSample) => boolean, timeoutMs: number): Promise<OffsetSample> {
    const from = this.samples.length;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.samples.slice(from).find(ok);
      if (hit) return hit;
      if (Date.now() > deadline) {
        const last = this.samples.at(-1);
        const state = last ? `ends ${show(last.ends)}, committed ${show(last.committed)}` : "no sample";
        throw new Error(`offsets never showed ${what} within ${timeoutMs / 1000} s (${state}; last error: ${String(this.lastError)})`);
      }
      await sleep(10);
    }
  }

  /** Every partition whose committed offset was ever lower than in an earlier sample. */
  regressions(): string[] {
    const highest = new Map<number, number>();
    const found: string[] = [];
    for (const s of this.samples) {
      for (const [p, o] of s.committed) {
        const before = highest.get(p) ?? 0;
        if (o < before) found.push(`p${p}: committed ${o} after ${before}`);
        highest.set(p, Math.max(before, o));
      }
    }
    return found;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.admin.disconnect();
  }
}

// ---- what a day's offsets left in ClickHouse ---------------------------------------------------

/** A day's messages in one partition: offsets from … to-1. */
export interface OffsetRange {
  partition: number;
  from: number;
  to: number;
}

export function rangesBetween(before: Offsets, after: Offsets): OffsetRange[] {
  return [...after].sort(([a], [b]) => a - b).map(([partition, to]) => ({ partition, from: before.get(partition) ?? 0, to }));
}

/** SQL condition: (partition, offset) within one of the ranges; every value is a number we computed. */
export function inRanges(ranges: readonly OffsetRange[], partitionColumn: string, offsetColumn: string): string {
  const parts = ranges.map((r) => `(${partitionColumn} = ${r.partition} AND ${offsetColumn} >= ${r.from} AND ${offsetColumn} < ${r.to})`);
  return parts.length === 0 ? "0" : `(${parts.join(" OR ")})`;
}

export interface DayLanding {
  /** ods.event of the date read merged (FINAL), its distinct WatchIDs, ods.event_v, and its rows as stored. */
  odsFinal: number;
  odsUnique: number;
  odsView: number;
  odsStored: number;
  /** ods.event_errors rows (FINAL) read from the day's offsets. */
  errors: number;
  /** stg.hits_raw rows of the day's offsets, and how many distinct offsets they cover. */
  stgRows: number;
  stgOffsets: number;
  /** stg.dead_letters rows of the day's offsets. */
  deadLetters: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function dayLanding(date: string, ranges: readonly OffsetRange[]): Promise<DayLanding> {
  if (!DATE.test(date)) throw new Error(`not a date: ${date}`);
  const hits = inRanges(ranges, "kafka_partition", "kafka_offset");
  return withClickHouse(async (ch) => {
    const one = async (sql: string): Promise<number> => Number((await ch.query<{ n: string }>(sql))[0]?.n ?? Number.NaN);
    return {
      odsFinal: await one(`SELECT count() AS n FROM ods.event_dist FINAL WHERE EventDate = '${date}'`),
      odsUnique: await one(`SELECT uniqExact(WatchID) AS n FROM ods.event_dist WHERE EventDate = '${date}'`),
      odsView: await one(`SELECT count() AS n FROM ods.event_v WHERE EventDate = '${date}'`),
      odsStored: await one(`SELECT count() AS n FROM ods.event_dist WHERE EventDate = '${date}'`),
      errors: await one(`SELECT count() AS n FROM ods.event_errors_dist FINAL WHERE kafka_topic = 'hits' AND ${hits}`),
      stgRows: await one(`SELECT count() AS n FROM stg.hits_raw_dist WHERE kafka_topic = 'hits' AND ${hits}`),
      stgOffsets: await one(`SELECT uniqExact(kafka_partition, kafka_offset) AS n FROM stg.hits_raw_dist WHERE kafka_topic = 'hits' AND ${hits}`),
      deadLetters: await one(`SELECT count() AS n FROM stg.dead_letters_dist WHERE topic = 'hits' AND ${inRanges(ranges, "partition", "offset")}`),
    };
  });
}

export async function stgOffsetsIn(ranges: readonly OffsetRange[]): Promise<number> {
  const sql = `SELECT uniqExact(kafka_partition, kafka_offset) AS n FROM stg.hits_raw_dist WHERE kafka_topic = 'hits' AND ${inRanges(ranges, "kafka_partition", "kafka_offset")}`;
  return withClickHouse(async (ch) => Number((await ch.query<{ n: string }>(sql))[0]?.n ?? Number.NaN));
}

export interface DeadLetterRow {
  partition: number;
  offset_text: string;
  key: string | null;
  reason: string;
  raw_bytes: number;
  raw_length: string;
  /** MD5 of the raw bytes kept (hex, upper case): exact without printing 64 KiB in a diff. */
  raw_md5: string;
  error_code: number | null;
  target_table: string;
}

/** The dead letters of hits within the ranges, in partition and offset order. */
export async function deadLettersIn(ranges: readonly OffsetRange[]): Promise<DeadLetterRow[]> {
  return withClickHouse((ch) =>
    ch.query<DeadLetterRow>(
      `SELECT partition, toString(offset) AS offset_text, key, reason, raw_bytes, toString(length(raw)) AS raw_length, hex(MD5(raw)) AS raw_md5, error_code, target_table
         FROM stg.dead_letters_dist WHERE topic = 'hits' AND ${inRanges(ranges, "partition", "offset")} ORDER BY partition, offset`,
    ),
  );
}

// ---- the loader's /metrics and /health -----------------------------------------------------------

export async function loaderMetricsText(config: StandConfig, instance = 1): Promise<string> {
  const response = await fetch(`${loaderBaseUrl(config, instance)}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`loader /metrics answered ${response.status}`);
  return response.text();
}

/** The sum of a metric's series whose labels include every one given (Prometheus text format). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const seriesLabels = match[2] ?? "";
    if (Object.entries(labels).every(([k, v]) => seriesLabels.includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}

/** Waits until the loader's /health (instance `instance`'s) says it consumes (after a restart it first rejoins its groups). */
export async function waitForLoaderConsuming(config: StandConfig, timeoutMs = 120_000, instance = 1): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const { state } = await loaderHealth(config, 2000, instance);
      if (state === "consuming") return;
      last = `state ${state}`;
    } catch (err) {
      last = errorMessage(err);
    }
    if (Date.now() > deadline) throw new Error(`loader instance ${instance} did not reach 'consuming' within ${timeoutMs / 1000} s: ${last}`);
    await sleep(250);
  }
}

/** A loader pause point as GET /fail-points shows it (src/loader/pause-points.ts). */
export interface LoaderPause {
  id: number;
  point: "before_insert" | "before_commit";
  topic: string;
  reachedAt?: string;
  detail?: string;
  releasedAt?: string;
}

async function failPointsRequest<T>(config: StandConfig, method: "GET" | "POST", route: string, body?: unknown, instance = 1): Promise<T> {
  const response = await fetch(`${loaderBaseUrl(config, instance)}${route}`, {
    method,
    headers: body === undefined ? undefined : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`loader instance ${instance} ${method} ${route} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * Arms a pause point on the test stand's loader (instance `instance` of a group): the next flush cycle of `topic` that reaches
 * `point` waits there until released. `reached()` resolves once a cycle waits at it (the wait
 * holds until the test releases it, so the moment cannot pass unseen), and fails, saying so, when
 * no cycle got there in time; `release()` lets the cycle go on.
 */
export async function armLoaderPause(config: StandConfig, point: LoaderPause["point"], topic: string, instance = 1) {
  const armed = await failPointsRequest<LoaderPause>(config, "POST", "/fail-points", { point, topic, note: "loader fault test" }, instance);
  return {
    id: armed.id,
    reached: async (timeoutMs = 120_000): Promise<LoaderPause> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { points } = await failPointsRequest<{ points: LoaderPause[] }>(config, "GET", "/fail-points", undefined, instance);
        const mine = points.find((p) => p.id === armed.id);
        if (mine?.reachedAt !== undefined) return mine;
        if (Date.now() > deadline) throw new Error(`loader instance ${instance} never reached pause point ${armed.id} (${point} on ${topic}) within ${timeoutMs / 1000} s: the fault could not be staged`);
        await sleep(50);
      }
    },
    release: () => failPointsRequest<LoaderPause>(config, "POST", `/fail-points/${armed.id}/release`, undefined, instance),
  };
}

/** Releases every pause point the loader holds or has armed (what a test that died left behind). */
export async function releaseAllLoaderPauses(config: StandConfig, instance = 1): Promise<number> {
  const { points } = await failPointsRequest<{ points: LoaderPause[] }>(config, "GET", "/fail-points", undefined, instance);
  const open = points.filter((p) => p.releasedAt === undefined);
  for (const p of open) await failPointsRequest<LoaderPause>(config, "POST", `/fail-points/${p.id}/release`, undefined, instance);
  return open.length;
}

/** Waits until a consumer group is Stable with at least one member again (a member that was dropped
 * has rejoined and synced); fails, naming the state seen, after `timeoutMs`. */
export async function groupStable(groupId: string, timeoutMs = 60_000): Promise<void> {
  const admin = kafkaClient("loader-day-group-state").admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    let seen = "";
    for (;;) {
      const [group] = (await admin.describeGroups([groupId])).groups;
      seen = `${group?.state ?? "?"} with ${group?.members.length ?? 0} member(s)`;
      if (group?.state === "Stable" && group.members.length > 0) return;
      if (Date.now() > deadline) throw new Error(`group ${groupId} not Stable within ${timeoutMs / 1000} s: ${seen}`);
      await sleep(100);
    }
  } finally {
    await admin.disconnect();
  }
}
