// The wait after the generator's batch: first the loader's group commits the end of topic hits (every
// hit sent is placed, tasks/ingest-wait.ts), then the passport condition, exactly: rows of
// ods.event_dist for the passport dates plus rows of ods.event_errors_dist must reach the
// passport's total of events ("something arrived" is not the condition). Progress is logged every
// few seconds with counts.
import { connectClickHouse, type StandClickHouse } from "../src/clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../src/config/index.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, readOdsRefusedHitsPerDate, readOdsValidHitsPerDate, passportDays, type Passport, sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { waitForLoaderCommitted } from "./ingest-wait.ts";

const STEP = "waitForOds";
/** ODS counts that stand still this long after every message was placed are final. */
const STALL_MS = 15_000;

export interface WaitForOdsInput extends TaskIo {
  passport: Passport;
  /** Passport day numbers to wait for; every starting day when omitted. */
  days?: readonly number[];
  timeoutMs?: number;
  pollMs?: number;
  progressEveryMs?: number;
  /** Fail once the counts stood still this long short of the passport (the loader placed everything). */
  stallMs?: number;
  config?: StandConfig;
}

export interface OdsCounts {
  /** Hits in ods.event_dist FINAL whose EventDate is one of the passport dates (each hit once). */
  eventRows: number;
  /** Rows of ods.event_errors_dist (all of them: an invalid hit may have no readable date). */
  errorRows: number;
}

export interface OdsReached extends OdsCounts {
  expected: number;
  seconds: number;
}

/** The passport condition's two counts, from the world's ODS facts (src/world/ods-facts.ts). */
export async function readOdsCounts(clickhouse: StandClickHouse, dates: readonly string[]): Promise<OdsCounts> {
  const [valid, refused] = await Promise.all([readOdsValidHitsPerDate(clickhouse, dates), readOdsRefusedHitsPerDate(clickhouse)]);
  let eventRows = 0;
  for (const n of valid.values()) eventRows += n;
  return { eventRows, errorRows: refused.reduce((sum, r) => sum + r.n, 0) };
}

function describe(counts: OdsCounts, expected: number, dates: readonly string[]): string {
  const seen = counts.eventRows + counts.errorRows;
  const pct = expected === 0 ? 100 : Math.floor((100 * seen) / expected);
  return `${counts.eventRows} event rows for ${dates.length} passport date(s) + ${counts.errorRows} error rows = ${seen} of ${expected} (${pct}%)`;
}

/** Polls until the passport condition holds; a timeout error names what it saw and what it expected. */
export async function waitForOds(input: WaitForOdsInput): Promise<OdsReached> {
  const days = passportDays(input.passport, input.days);
  const dates = days.map((d) => d.date);
  const expected = days.reduce((sum, d) => sum + d.events, 0);
  const timeoutMs = input.timeoutMs ?? 300_000;
  const started = Date.now();
  let lastProgress = started;
  let counts: OdsCounts = { eventRows: 0, errorRows: 0 };
  input.log(`waiting for the loader to place every hit sent, then for ${expected} events of ${dates.join(", ")} in ods.event_dist + ods.event_errors_dist (timeout ${timeoutMs / 1000} s)`);
  const placed = await waitForLoaderCommitted({ ...input, topic: HITS_TOPIC.name, group: HITS_CONSUMER_GROUP, timeoutMs });
  input.log(`the loader placed all ${placed.total} messages of topic ${HITS_TOPIC.name} after ${placed.seconds.toFixed(1)} s`);
  let lastChange = Date.now(); // a stall counts from here: before the commit, ODS may rightly stand still
  const clickhouse = connectClickHouse({ account: "etl", config: input.config ?? loadStandConfig() });
  try {
    for (;;) {
      throwIfAborted(input.signal, STEP);
      const previous = counts;
      counts = await readOdsCounts(clickhouse, dates);
      if (counts.eventRows !== previous.eventRows || counts.errorRows !== previous.errorRows) lastChange = Date.now();
      const seconds = (Date.now() - started) / 1000;
      if (counts.eventRows + counts.errorRows >= expected) {
        input.log(`ODS reached the passport after ${seconds.toFixed(1)} s: ${describe(counts, expected, dates)}`);
        return { ...counts, expected, seconds };
      }
      // placed means inserted (synchronously, on both shards): counts that stand still short of the
      // passport for a while will not grow; say so now rather than at the timeout
      const stalled = Date.now() - lastChange >= (input.stallMs ?? STALL_MS);
      if (stalled || Date.now() - started >= timeoutMs) {
        throw new WorldTaskError(
          STEP,
          `ODS did not reach the passport total ${stalled ? `(no change for ${((Date.now() - lastChange) / 1000).toFixed(0)} s after the loader placed every message)` : `within ${timeoutMs / 1000} s`}: ` +
            `saw ${describe(counts, expected, dates)} (events counted FINAL: each hit once). ` +
            "The loader placed every message, so hits are missing from the topic: check that the generator sent every day " +
            "and the dead letters (SELECT reason, count() FROM stg.dead_letters_dist GROUP BY reason).",
        );
      }
      if (Date.now() - lastProgress >= (input.progressEveryMs ?? 5000)) {
        lastProgress = Date.now();
        input.log(`after ${seconds.toFixed(0)} s: ${describe(counts, expected, dates)}`);
      }
      await sleepUnlessAborted(input.pollMs ?? 1000, input.signal, STEP);
    }
  } finally {
    await clickhouse.close();
  }
}
