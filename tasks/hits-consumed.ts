// The step DAGs' wait after playing days beyond the passport (which counts only the starting days):
// the loader consumes (asked for if it is not), its group clickstream_hits has committed the end
// offset of every partition of `hits` (it commits only what it placed, and it inserts with
// insert_distributed_sync = 1, so ODS holds every placed hit on both shards by then), and then ODS
// is checked against the day itself: the generator is deterministic and a day does not depend on
// the days before it, so the valid hits of each day just played are counted here from the
// generator's own code with the passport's seed, and ods.event_dist FINAL must hold exactly that
// many for the date. A commit that got ahead of ODS (a lost insert) makes the step red, naming the
// date and both numbers, instead of a green run over a short day.
import { DayRenderer, MAX_HIT_BYTES, World, type WorldSize } from "../generator/src/index.ts";
import { connectClickHouse } from "../src/clickhouse/index.ts";
import { ensureConsuming } from "../src/loader/index.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, readOdsValidHitsPerDate, rideOutTransient, sleepUnlessAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { waitForLoaderCommitted } from "./ingest-wait.ts";
import { readOdsCounts } from "./wait-for-ods.ts";

const STEP = "waitForHitsConsumed";

export interface PlayedDay {
  day: number;
  date: string;
  /** Valid hits the generator sends for the day: what ods.event holds for its date. */
  valid: number;
  /** Hits sent in all (valid and planted invalid ones). */
  sent: number;
}

/** What the generator plays on counter day `day` with `seed` at the world's size, counted by rendering the day (about 0.2 s canonical). */
export function playedDay(seed: number, day: number, size: WorldSize = "canonical"): PlayedDay {
  const renderer = new DayRenderer(new World(seed, size), day);
  const scratch = Buffer.allocUnsafe(MAX_HIT_BYTES);
  for (let position = 0; position < renderer.total; position++) renderer.write(position, scratch, 0);
  return { day, date: renderer.date, valid: renderer.counts.valid, sent: renderer.total };
}

export async function waitForHitsConsumed(io: TaskIo, days: readonly PlayedDay[], timeoutMs = 600_000, requestedBy = "a step DAG"): Promise<void> {
  // Postgres restarting under the control row is ridden out, not a lost try
  await rideOutTransient("asking the loader to consume", () => ensureConsuming({ ...io, requestedBy }), {
    signal: io.signal,
    step: STEP,
    log: io.log,
    deadline: Date.now() + 120_000,
  });
  const placed = await waitForLoaderCommitted({ ...io, topic: HITS_TOPIC.name, group: HITS_CONSUMER_GROUP, timeoutMs });
  io.log(`${HITS_CONSUMER_GROUP} placed all ${placed.total} messages of ${HITS_TOPIC.name} after ${placed.seconds.toFixed(1)} s`);
  const dates = days.map((d) => d.date);
  const clickhouse = connectClickHouse({ account: "etl" });
  try {
    let seen = await readOdsValidHitsPerDate(clickhouse, dates);
    const off = () => days.filter((d) => (seen.get(d.date) ?? 0) !== d.valid);
    if (off().length > 0) {
      await sleepUnlessAborted(2000, io.signal, STEP); // placed means in ODS; one more look costs nothing
      seen = await readOdsValidHitsPerDate(clickhouse, dates);
    }
    const describe = (d: PlayedDay) => `${d.date}: ${seen.get(d.date) ?? 0} of ${d.valid} valid hits`;
    const wrong = off();
    if (wrong.length > 0) {
      const errors = await readOdsCounts(clickhouse, dates);
      throw new WorldTaskError(
        STEP,
        `the loader placed every message, but ods.event_dist FINAL does not hold the day as the generator played it: ${wrong.map(describe).join(", ")} ` +
          `(${errors.errorRows} error rows in ods.event_errors_dist). Compare stg.hits_raw_dist for the date with ODS and look at stg.dead_letters_dist ` +
          "and the loader's log; the world is no longer exact: make rebuild-storage recreates it.",
      );
    }
    io.log(`ODS holds every valid hit played: ${days.map(describe).join(", ")}`);
  } finally {
    await clickhouse.close();
  }
}
