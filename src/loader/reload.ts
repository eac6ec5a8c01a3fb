// Hot reload of loader.options: the stand config file is read and validated again, whole; options
// that validate replace the running ones (WorldLoader.reconfigure), options that do not are refused
// and the running ones kept, and either way the loader says what happened: a log line (what changed,
// old → new, or why it was refused, naming each bad field), /health's `reload` and two metrics.
// The triggers (a change of the file, SIGHUP, POST /reload) live in main.ts and config-watch.ts.
import { readFileSync } from "node:fs";
import { compileLoaderConfig, parseStandConfig, type LoaderConfig, type StandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import type { LoaderMetrics } from "./metrics.ts";

export type ReloadTrigger = "file" | "signal" | "http";
export type ReloadResult = "applied" | "refused" | "unchanged";

const TRIGGER_WORDS: Record<ReloadTrigger, string> = { file: "the stand config file changed", signal: "SIGHUP", http: "POST /reload" };

/** One option that differs: its path (`flush.maxRows`, `tables["stg.hits_in"].headers`) and both values as written in logs. */
export interface OptionChange {
  path: string;
  from: string;
  to: string;
}

export interface ReloadOutcome {
  result: ReloadResult;
  trigger: ReloadTrigger;
  /** When it was read (ISO 8601). */
  at: string;
  /** applied: what changed in loader.options, old → new. */
  changes: OptionChange[];
  /** Of the changes, the paths in force only from the next start of consuming (AT_NEXT_START). */
  atNextStart: string[];
  /** Paths outside loader.options, of the sections the loader reads, that differ from what it started with: a reload does not reach them. */
  needRestart: string[];
  /** refused: why, naming each bad field (the zod issue paths). */
  error?: string;
}

/** What /health says of the last reload (null before any). */
export interface ReloadStatus {
  ok: boolean;
  at: string;
  trigger: ReloadTrigger;
  result: ReloadResult;
  changes: string[];
  error?: string;
}

/**
 * Options the running cores keep until they are built again, at the next start of consuming
 * (LoaderCore.reconfigure keeps the backoff and kills-server options of its start; WorldLoader's
 * cycle log reads killsServer.suspectAfter at start). Everything else is in force at once.
 */
export const AT_NEXT_START: readonly string[] = ["backoff", "killsServer"];

/** The sections of the stand config the loader reads besides loader.options: a change there takes a restart. */
function loaderSections(config: StandConfig): Record<string, unknown> {
  const { options: _options, ...loader } = config.loader;
  return { bind_host: config.bind_host, postgres: config.postgres, kafka: config.kafka, clickhouse: config.clickhouse, loader };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function pathSegment(key: string | number): string {
  if (typeof key === "number") return `[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A value as a log line shows it: JSON, at most 200 characters; `(unset)` for none. */
export function showValue(value: unknown): string {
  if (value === undefined) return "(unset)";
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * Every leaf that differs between two option trees, in key order. An object on one side and nothing
 * on the other (a table added to `tables`) is compared leaf by leaf with an empty one; arrays of the
 * same length element by element, others whole.
 */
export function diffOptions(before: unknown, after: unknown, at = ""): OptionChange[] {
  if (isPlainObject(before) || isPlainObject(after)) {
    if ((isPlainObject(before) || before === undefined) && (isPlainObject(after) || after === undefined)) {
      const from = before ?? {};
      const to = after ?? {};
      const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])];
      return keys.flatMap((key) => diffOptions(from[key], to[key], `${at}${pathSegment(key)}`));
    }
  } else if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((item: unknown, i) => diffOptions(item, after[i], `${at}${pathSegment(i)}`));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [{ path: at.replace(/^\./, "") || "(all)", from: showValue(before), to: showValue(after) }];
}

/** A thrown error as one line: a ConfigError's issue list ("\n  path: message") joined with "; ". */
function oneLine(err: unknown): string {
  return errorMessage(err).replace(/:\n\s+/g, ": ").replace(/\n\s*/g, "; ");
}

/** Reads and validates the stand config file again, whole (loadStandConfig keeps the first reading for the process). */
export function readStandConfigFile(file: string): StandConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read the stand config ${file} (an editor between its rename and its write is read again at its next change): ${errorMessage(err)}`, { cause: err });
  }
  return parseStandConfig(text, file);
}

export interface OptionsReloaderDeps {
  /** Reads and validates the whole stand config again; throws naming each bad field. */
  read: () => StandConfig;
  /** The stand config the process started with: its other sections are not reloaded. */
  started: StandConfig;
  /** The loader options in force now. */
  running: LoaderConfig;
  /** Puts options in force (WorldLoader.reconfigure); may throw, and the running options are then put back. */
  apply: (next: LoaderConfig) => void;
  metrics?: LoaderMetrics;
  now?: () => number;
}

/** One reload at a time (each is synchronous): read, validate, compare, apply or refuse, record. */
export class OptionsReloader {
  private running: LoaderConfig;
  private last: ReloadStatus | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: OptionsReloaderDeps) {
    this.running = deps.running;
    this.now = deps.now ?? Date.now;
  }

  /** The options in force (the start's until a reload is applied). */
  get options(): LoaderConfig {
    return this.running;
  }

  /** The last reload, as /health shows it; null before any. */
  status(): ReloadStatus | null {
    return this.last === null ? null : { ...this.last, changes: [...this.last.changes] };
  }

  reload(trigger: ReloadTrigger): ReloadOutcome {
    const at = new Date(this.now()).toISOString();
    let stand: StandConfig;
    let next: LoaderConfig;
    try {
      stand = this.deps.read();
      next = compileLoaderConfig(stand.loader.options ?? {});
    } catch (err) {
      return this.record({ result: "refused", trigger, at, changes: [], atNextStart: [], needRestart: [], error: oneLine(err) });
    }
    const needRestart = diffOptions(loaderSections(this.deps.started), loaderSections(stand)).map((c) => c.path);
    const changes = diffOptions(this.running, next);
    if (changes.length === 0) return this.record({ result: "unchanged", trigger, at, changes, atNextStart: [], needRestart });
    try {
      this.deps.apply(next);
    } catch (err) {
      const putBack = this.putBack();
      return this.record({ result: "refused", trigger, at, changes: [], atNextStart: [], needRestart, error: `applying the new options failed (${oneLine(err)}); ${putBack}` });
    }
    this.running = next;
    const atNextStart = changes.map((c) => c.path).filter((p) => AT_NEXT_START.some((prefix) => p === prefix || p.startsWith(`${prefix}.`)));
    return this.record({ result: "applied", trigger, at, changes, atNextStart, needRestart });
  }

  private putBack(): string {
    try {
      this.deps.apply(this.running);
      return "the running options were put back";
    } catch (err) {
      return `and putting the running options back failed too (${oneLine(err)}): restart the loader`;
    }
  }

  private record(outcome: ReloadOutcome): ReloadOutcome {
    const ok = outcome.result !== "refused";
    this.last = { ok, at: outcome.at, trigger: outcome.trigger, result: outcome.result, changes: outcome.changes.map(describeChange), ...(outcome.error === undefined ? {} : { error: outcome.error }) };
    this.deps.metrics?.configReloads.inc({ result: outcome.result });
    this.deps.metrics?.configLastReloadSuccess.set(ok ? 1 : 0);
    return outcome;
  }
}

export function describeChange(change: OptionChange): string {
  return `${change.path} ${change.from} → ${change.to}`;
}

/** The log line of a reload: what changed, that nothing did, or why it was refused and what to do. */
export function describeReload(outcome: ReloadOutcome): string {
  const why = TRIGGER_WORDS[outcome.trigger];
  if (outcome.result === "refused") {
    return `loader options NOT reloaded (${why}): ${outcome.error ?? "?"}; the running options are kept. Fix the file: it is read again at its next change, on SIGHUP and by make loader-reload`;
  }
  if (outcome.result === "unchanged") return `loader options reloaded (${why}): nothing changed in loader.options`;
  const later = outcome.atNextStart.length > 0 ? ` (${outcome.atNextStart.join(", ")}: in force from the next start of consuming)` : "";
  return `loader options reloaded (${why}): ${outcome.changes.map(describeChange).join("; ")}${later}`;
}

/** The warning for changes a reload does not reach, or undefined when there are none. */
export function describeNeedRestart(outcome: ReloadOutcome): string | undefined {
  if (outcome.needRestart.length === 0) return undefined;
  return `the stand config changed outside loader.options (${outcome.needRestart.join(", ")}): a reload does not apply that; restart the loader for it (make down, then make up)`;
}
