// Semantically invalid hits: a small deterministic share of pageviews gets exactly one defect, so
// the ingest can route them to ods.event_errors with a reason. The choice hashes the hit's
// position in its day (QUALITY component), so it depends on nothing else the day draws.
import { HIT_FIELDS, EVENT_TYPES } from "./hit-format.ts";
import { fmix32, hashWords } from "./rng.ts";
import { Branch, Component, INVALID_PAGEVIEW_PERMILLE, type WorldSeed } from "./world.ts";

export const INVALID_KINDS = ["bad_timestamp", "unknown_event_type", "missing_id"] as const;
export type InvalidKind = (typeof INVALID_KINDS)[number];

export interface Defect {
  readonly kind: InvalidKind;
  /** Which form of the defect; see applyDefect. */
  readonly variant: number;
}

const QUALITY_LANE = 11;

/** Picks the defective hits of one day: one keyed hash per position, no stream to advance. */
export class DayQuality {
  private readonly key: number;

  constructor(world: WorldSeed, day: number) {
    this.key = hashWords(QUALITY_LANE, world.address(Branch.DAY, day, Component.QUALITY));
  }

  /** The defect of the pageview at `position` of the day, if it gets one. */
  defectAt(position: number): Defect | undefined {
    const h = fmix32(Math.imul(position + 1, 0x9e3779b1) ^ this.key);
    if (h % 1000 >= INVALID_PAGEVIEW_PERMILLE) return undefined;
    const kind = INVALID_KINDS[(h >>> 12) % INVALID_KINDS.length];
    if (kind === undefined) return undefined;
    return { kind, variant: (h >>> 20) % 3 };
  }
}

/** A UTC time in a shape the strict `YYYY-MM-DDTHH:MM:SSZ` contract rejects. */
export function badTimestamp(validTime: string, variant: number): string {
  const [date = "", rest = ""] = validTime.split("T");
  const clock = rest.replace("Z", "");
  if (variant === 0) return `${date} ${clock}`;
  if (variant === 1) {
    const [y, m, d] = date.split("-");
    return `${d}/${m}/${y} ${clock}`;
  }
  return "";
}

export const UNKNOWN_EVENT_TYPES: readonly string[] = ["scroll", "click", "page_view"];

const STRICT_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/** True for a real instant written exactly as YYYY-MM-DDTHH:MM:SSZ. */
export function isStrictUtcTime(value: unknown): boolean {
  if (typeof value !== "string" || !STRICT_UTC.test(value)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && new Date(ms).toISOString().replace(".000Z", "Z") === value;
}

export type HitVerdict = "valid" | InvalidKind | "contract_violation";

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * Classifies a parsed hit the way the ingest is expected to: the 47 keys in order first, then the
 * ids, the time and the event type. The generator never emits a contract violation.
 */
export function classifyHit(hit: unknown): HitVerdict {
  if (hit === null || typeof hit !== "object" || Array.isArray(hit)) return "contract_violation";
  const record = hit as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length !== HIT_FIELDS.length || keys.some((k, i) => k !== HIT_FIELDS[i])) return "contract_violation";
  const isId = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
  if (!isId(record.WatchID) || !isId(record.ClientID)) return "missing_id";
  if (!isStrictUtcTime(record.UTCEventTime)) return "bad_timestamp";
  if (typeof record.EventType !== "string" || !KNOWN_TYPES.has(record.EventType)) return "unknown_event_type";
  return "valid";
}
