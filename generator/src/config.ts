// The generator's own configuration: it runs as a separate program (a container or a local
// process) and reads nothing of the stand's config. Every flag also comes from an environment
// variable; commander reads the environment (Option.env), so no code here touches process.env.
import { Option } from "commander";
import { DEFAULT_SEED, WORLD_SIZE_NAMES, type WorldSize } from "./world.ts";

export class GeneratorConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GeneratorConfigError";
  }
}

export const DEFAULT_HITS_TOPIC = "hits";
export const DEFAULT_ORDERS_TOPIC = "orders";
export const DEFAULT_BATCH_SIZE = 5_000;
/**
 * Bytes of keys and values (plus a per-record allowance) per partition batch, one sendBatch each;
 * keeps every record batch under the broker's 1 MiB message.max.bytes (a hit is at most 16 KiB).
 */
export const DEFAULT_BATCH_BYTES = 900_000;
export const DEFAULT_IN_FLIGHT = 4;
export const DEFAULT_SPEED = 60;
export const DEFAULT_LAG_LOG_SECONDS = 60;

/** Where messages go: exactly one of a Kafka bootstrap list or a file. */
export type Output =
  | {
      readonly kind: "kafka";
      readonly brokers: readonly string[];
      readonly topic: string;
      readonly batchSize: number;
      readonly batchBytes: number;
      readonly inFlight: number;
    }
  | { readonly kind: "file"; readonly path: string; readonly topic: string; readonly batchSize: number; readonly batchBytes: number };

/** Raw values as commander hands them over (flags or environment). */
export interface RawOptions {
  seed: number;
  size: WorldSize;
  day?: number;
  days?: number;
  limit?: number;
  speed?: number;
  lagLogSeconds?: number;
  brokers?: string;
  file?: string;
  topic: string;
  batchSize: number;
  batchBytes: number;
  inFlight: number;
}

export interface PlayConfig {
  readonly seed: number;
  readonly size: WorldSize;
  readonly day: number;
  readonly days: number;
  readonly limit: number;
  readonly output: Output;
}

export interface LiveConfig {
  readonly seed: number;
  readonly size: WorldSize;
  readonly day: number;
  readonly speed: number;
  readonly lagLogSeconds: number;
  readonly output: Output;
}

function integerParser(name: string, min: number, max: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new GeneratorConfigError(`${name} must be an integer in ${min}…${max}, got "${text}"`);
    }
    return value;
  };
}

function positiveNumberParser(name: string) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new GeneratorConfigError(`${name} must be a positive number, got "${text}"`);
    return value;
  };
}

/** A flag backed by GENERATOR_<NAME>. */
function flag(flags: string, description: string, env: string): Option {
  return new Option(flags, description).env(env);
}

export const options = {
  seed: () => flag("--seed <n>", "world seed", "GENERATOR_SEED").argParser(integerParser("--seed", 0, Number.MAX_SAFE_INTEGER)).default(DEFAULT_SEED),
  size: () => flag("--size <name>", "world size (canonical: the passport data/world-inventory.json; small: the test stands')", "GENERATOR_WORLD_SIZE").choices(WORLD_SIZE_NAMES).default("canonical"),
  day: () => flag("--day <d>", "first model day (0 = 2026-06-01); required", "GENERATOR_DAY").argParser(integerParser("--day", 0, 3650)),
  days: (fallback: number) => flag("--days <n>", "number of days", "GENERATOR_DAYS").argParser(integerParser("--days", 1, 366)).default(fallback),
  limit: () => flag("--limit <n>", "stop after this many messages in all", "GENERATOR_LIMIT").argParser(integerParser("--limit", 0, Number.MAX_SAFE_INTEGER)),
  speed: () => flag("--speed <x>", "model seconds per wall second", "GENERATOR_SPEED").argParser(positiveNumberParser("--speed")).default(DEFAULT_SPEED),
  lagLog: () => flag("--lag-log-seconds <s>", "how often live mode logs its lag", "GENERATOR_LAG_LOG_SECONDS").argParser(positiveNumberParser("--lag-log-seconds")).default(DEFAULT_LAG_LOG_SECONDS),
  brokers: () => flag("--brokers <list>", "Kafka bootstrap servers, host:port[,host:port]", "GENERATOR_BROKERS"),
  file: () => flag("--file <path>", "write one JSON object per line to this file ('-' = stdout)", "GENERATOR_FILE"),
  topic: (env: string, fallback: string) => flag("--topic <name>", "Kafka topic", env).default(fallback),
  batchSize: () => flag("--batch-size <n>", "at most this many messages per send (live, snapshot)", "GENERATOR_BATCH_SIZE").argParser(integerParser("--batch-size", 1, 100_000)).default(DEFAULT_BATCH_SIZE),
  batchBytes: () => flag("--batch-bytes <n>", "bytes per Kafka partition batch (one send); keep under the broker's 1 MiB", "GENERATOR_BATCH_BYTES").argParser(integerParser("--batch-bytes", 1_000, 1_000_000)).default(DEFAULT_BATCH_BYTES),
  inFlight: () => flag("--in-flight <n>", "Kafka sends in flight at once", "GENERATOR_IN_FLIGHT").argParser(integerParser("--in-flight", 1, 64)).default(DEFAULT_IN_FLIGHT),
};

const BROKER = /^[A-Za-z0-9._-]+:\d{1,5}$/;

export function resolveOutput(raw: RawOptions): Output {
  const hasBrokers = raw.brokers !== undefined && raw.brokers !== "";
  const hasFile = raw.file !== undefined && raw.file !== "";
  if (hasBrokers === hasFile) {
    throw new GeneratorConfigError("give exactly one of --brokers (GENERATOR_BROKERS) or --file (GENERATOR_FILE)");
  }
  if (hasFile) return { kind: "file", path: raw.file ?? "-", topic: raw.topic, batchSize: raw.batchSize, batchBytes: raw.batchBytes };
  const brokers = (raw.brokers ?? "").split(",").map((b) => b.trim()).filter((b) => b !== "");
  const bad = brokers.find((b) => !BROKER.test(b));
  if (bad !== undefined || brokers.length === 0) throw new GeneratorConfigError(`--brokers: "${bad ?? raw.brokers}" is not host:port`);
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(raw.topic)) throw new GeneratorConfigError(`--topic: "${raw.topic}" is not a valid topic name`);
  return { kind: "kafka", brokers, topic: raw.topic, batchSize: raw.batchSize, batchBytes: raw.batchBytes, inFlight: raw.inFlight };
}

function requireDay(raw: RawOptions): number {
  if (raw.day === undefined) throw new GeneratorConfigError("--day (GENERATOR_DAY) is required: there is no default day");
  return raw.day;
}

export function resolvePlay(raw: RawOptions): PlayConfig {
  return {
    seed: raw.seed,
    size: raw.size,
    day: requireDay(raw),
    days: raw.days ?? 1,
    limit: raw.limit ?? Number.POSITIVE_INFINITY,
    output: resolveOutput(raw),
  };
}

export function resolveLive(raw: RawOptions): LiveConfig {
  return {
    seed: raw.seed,
    size: raw.size,
    day: requireDay(raw),
    speed: raw.speed ?? DEFAULT_SPEED,
    lagLogSeconds: raw.lagLogSeconds ?? DEFAULT_LAG_LOG_SECONDS,
    output: resolveOutput(raw),
  };
}
