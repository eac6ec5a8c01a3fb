// The step DAGs' wait after playing days beyond the passport (which counts only the starting days):
// the loader consumes (asked for if it is not), its group clickstream_hits has committed the end
// offset of every partition of `hits` (it commits only what it placed, and it inserts with
// insert_distributed_sync = 1, so ODS holds every placed hit on both shards by then), and ODS has
// rows for every day just played. Not exact like the passport wait: the passport counts only the
// starting days.
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { ensureConsuming } from "../../src/loader/control.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC } from "../../src/world/constants.ts";
import { WorldTaskError, type TaskIo } from "../../src/world/io.ts";
import { waitForLoaderCommitted } from "../../tasks/ingest-wait.ts";
import { readOdsCounts } from "../../tasks/wait-for-ods.ts";

const STEP = "waitForHitsConsumed";

/** The dates of counter days `fromDay` … `fromDay + days - 1`, day 0 being the passport's start_date. */
export function counterDates(startDate: string, fromDay: number, days: number): string[] {
  const start = Date.parse(`${startDate}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(start + (fromDay + i) * 86_400_000).toISOString().slice(0, 10));
}

export async function waitForHitsConsumed(io: TaskIo, dates: readonly string[], timeoutMs = 600_000, requestedBy = "a step DAG"): Promise<void> {
  await ensureConsuming({ ...io, requestedBy });
  const placed = await waitForLoaderCommitted({ ...io, topic: HITS_TOPIC.name, group: HITS_CONSUMER_GROUP, timeoutMs });
  io.log(`${HITS_CONSUMER_GROUP} placed all ${placed.total} messages of ${HITS_TOPIC.name} after ${placed.seconds.toFixed(1)} s`);
  const clickhouse = connectClickHouse({ account: "etl" });
  try {
    const perDate = await Promise.all(dates.map(async (d) => ({ date: d, ...(await readOdsCounts(clickhouse, [d])) })));
    const seen = perDate.map((c) => `${c.date}: ${c.eventRows} events`).join(", ") + `; ${perDate[0]?.errorRows ?? 0} error rows in all`;
    if (!perDate.every((c) => c.eventRows > 0)) {
      throw new WorldTaskError(STEP, `every hit was placed, but ODS has no rows for some new date: ${seen}. Did the generator play those days? Dead letters are in stg.dead_letters_dist.`);
    }
    io.log(`ODS: ${seen}`);
  } finally {
    await clickhouse.close();
  }
}
