// The step DAGs' wait after playing days beyond the passport (which counts only the starting days):
// the hits readers have consumed everything the generator produced, i.e. the consumer group
// clickstream_hits has committed the end offset of every partition of `hits` (ClickHouse commits a
// block after writing it through the views), then ODS holds rows for every day just played and its
// counts stop moving (the views insert through Distributed tables, which forward asynchronously).
// Not exact like the passport wait: the passport counts only the starting days.
// A candidate for tasks/ (tasks/wait-for-ods.ts covers the passport days only).
import type { Admin } from "kafkajs";
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC } from "../../src/world/constants.ts";
import { sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../../src/world/io.ts";
import { withKafkaAdmin } from "../../tasks/kafka-admin.ts";
import { readOdsCounts } from "../../tasks/wait-for-ods.ts";

const STEP = "waitForHitsConsumed";

interface Lag {
  end: number;
  committed: number;
}

async function hitsLag(admin: Admin): Promise<Lag> {
  const ends = await admin.fetchTopicOffsets(HITS_TOPIC.name);
  const [group] = await admin.fetchOffsets({ groupId: HITS_CONSUMER_GROUP, topics: [HITS_TOPIC.name] });
  const committedBy = new Map((group?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]));
  let end = 0;
  let committed = 0;
  for (const p of ends) {
    end += Number(p.high);
    committed += Math.min(Number(p.high), committedBy.get(p.partition) ?? 0);
  }
  return { end, committed };
}

/** The dates of counter days `fromDay` … `fromDay + days - 1`, day 0 being the passport's start_date. */
export function counterDates(startDate: string, fromDay: number, days: number): string[] {
  const start = Date.parse(`${startDate}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(start + (fromDay + i) * 86_400_000).toISOString().slice(0, 10));
}

async function waitForZeroLag(io: TaskIo, deadline: number): Promise<Lag> {
  return withKafkaAdmin({}, "world-wait-consumed", async (admin) => {
    let lastLog = 0;
    for (;;) {
      throwIfAborted(io.signal, STEP);
      const lag = await hitsLag(admin);
      if (lag.committed >= lag.end) return lag;
      if (Date.now() > deadline) {
        throw new WorldTaskError(
          STEP,
          `the hits readers did not catch up: group ${HITS_CONSUMER_GROUP} committed ${lag.committed} of ${lag.end} messages of topic ${HITS_TOPIC.name}. ` +
            "Check the ClickHouse server.err.log for Kafka lines and that both nodes are up.",
        );
      }
      if (Date.now() - lastLog > 5000) {
        lastLog = Date.now();
        io.log(`${HITS_CONSUMER_GROUP}: ${lag.committed} of ${lag.end} messages committed`);
      }
      await sleepUnlessAborted(1000, io.signal, STEP);
    }
  });
}

/** Rows per new date and all error rows; "settled" once every date has rows and three polls a second apart agree. */
async function waitForOdsSettled(io: TaskIo, dates: readonly string[], deadline: number): Promise<string> {
  const clickhouse = connectClickHouse({ account: "etl" });
  try {
    let previous = "";
    let agreeing = 0;
    for (;;) {
      throwIfAborted(io.signal, STEP);
      const perDate = await Promise.all(dates.map(async (d) => ({ date: d, ...(await readOdsCounts(clickhouse, [d])) })));
      const seen = perDate.map((c) => `${c.date}: ${c.eventRows} events`).join(", ") + `; ${perDate[0]?.errorRows ?? 0} error rows in all`;
      const complete = perDate.every((c) => c.eventRows > 0);
      agreeing = complete && seen === previous ? agreeing + 1 : 0;
      previous = seen;
      if (agreeing >= 2) return seen;
      if (Date.now() > deadline) {
        throw new WorldTaskError(STEP, `every hit was consumed, but ODS did not settle with rows for every new date: ${seen}. Did the generator play those days?`);
      }
      await sleepUnlessAborted(1000, io.signal, STEP);
    }
  } finally {
    await clickhouse.close();
  }
}

export async function waitForHitsConsumed(io: TaskIo, dates: readonly string[], timeoutMs = 600_000): Promise<void> {
  const started = Date.now();
  const lag = await waitForZeroLag(io, started + timeoutMs);
  io.log(`${HITS_CONSUMER_GROUP} consumed all ${lag.end} messages of ${HITS_TOPIC.name} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // the views write ODS through Distributed tables, which forward to the shards a moment later
  io.log(`ODS settled: ${await waitForOdsSettled(io, dates, started + timeoutMs)}`);
}
