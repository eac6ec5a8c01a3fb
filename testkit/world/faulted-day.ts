// One world_next_day on the test stand with a fault struck in the middle of it, and what every
// fault must leave behind: the run's success, the position + 1, the group at the end offsets without
// ever going backwards, and the day exactly once in ODS (merged = distinct WatchIDs = ods.event_v =
// the generator's valid hits; with the error rows, every message that is not a poison). The fault
// tests of the loader (test/faults/loader-faults.test.ts) and of the keeper use it.
import assert from "node:assert/strict";
import { HITS_TOPIC } from "../../src/world/index.ts";
import { armLoaderPause, dayLanding, expectedDay, OffsetWatch, rangesBetween, show, total, type DayLanding, type LoaderPause, type OffsetRange, type Offsets } from "./loader-day.ts";
import { describeRun, readPositionText, taskInstances, triggerRun, waitForRun } from "./rest-world.ts";
import type { StandConfig } from "../../src/config/index.ts";

/** What a fault sees of the day being played. */
export interface DayInProgress {
  runId: string;
  /** hits' end offsets before the run. */
  before: Offsets;
  watch: OffsetWatch;
  /** The pause point armed for this day, if the test asked for one: the first flush cycle of hits
   * that reaches it waits there until released (src/loader/pause-points.ts). */
  pause: LoaderPauseHandle;
}

export type LoaderPauseHandle = Awaited<ReturnType<typeof armLoaderPause>>;

export interface PlayedDay {
  ranges: OffsetRange[];
  landing: DayLanding;
  /** Messages the day added to hits (poisons included). */
  messages: number;
  watch: OffsetWatch;
}


/**
 * Plays one day under `fault` and checks what every fault must leave: success, position + 1, the
 * group at the end offsets without ever going backwards, and the day exactly once in ODS.
 */
export async function playDay(
  config: StandConfig,
  name: string,
  poisons: number,
  pausePoint: LoaderPause["point"],
  fault: (day: DayInProgress) => Promise<void>,
  /** Which loader of a group holds the pause (loader.instances; 1 on a lone loader). */
  loaderInstance = 1,
): Promise<PlayedDay> {
  const position = Number(await readPositionText());
  const expected = expectedDay(position);
  const watch = await OffsetWatch.start();
  try {
    // what the last test or run sent is placed first, so the day's offsets are the day's alone
    const { ends: before } = await watch.until("the group at the end offsets before the day", (s) => total(s.committed) >= total(s.ends), 60_000);
    // armed once nothing is left to place: the first cycle of hits to reach it is the day's
    const pause = await armLoaderPause(config, pausePoint, HITS_TOPIC.name, loaderInstance);
    const started = Date.now();
    const run = await triggerRun("world_next_day", { days: 1 });
    try {
      await fault({ runId: run.dag_run_id, before, watch, pause });
    } catch (err) {
      // the next test must not start under this run: let it end (or time out) before failing
      await pause.release().catch(() => undefined);
      await waitForRun("world_next_day", run.dag_run_id, 180).catch(() => undefined);
      throw err;
    } finally {
      await pause.release().catch(() => undefined); // a fault that killed the loader took the point with it
    }
    const finished = await waitForRun("world_next_day", run.dag_run_id, 600);
    const seconds = (Date.now() - started) / 1000;
    const tasks = await taskInstances("world_next_day", run.dag_run_id);
    console.log(`${name}: world_next_day ${finished.state} in ${seconds.toFixed(1)} s; tries: ${[...tasks.values()].map((t) => `${t.task_id} ${t.try_number}`).join(", ")}`);
    assert.equal(finished.state, "success", describeRun({ run: finished, tasks, seconds }));
    assert.equal(await readPositionText(), String(position + 1), "the position advanced by exactly one day");

    const end = await watch.until("the group at the end offsets", (s) => total(s.committed) >= total(s.ends), 30_000);
    assert.deepEqual(end.committed, end.ends, "clickstream_hits committed exactly the end offset of every partition");
    assert.deepEqual(watch.regressions(), [], "no committed offset ever went backwards");
    const ranges = rangesBetween(before, end.ends);
    const messages = total(end.ends) - total(before);
    const landing = await dayLanding(expected.date, ranges);
    const replays = landing.stgRows - landing.stgOffsets;
    console.log(`${name}: day ${expected.date}, offsets ${show(before)} → ${show(end.ends)} (${messages} messages); ${JSON.stringify(landing)}; stg replays ${replays}`);

    assert.ok(landing.odsFinal > 0, `ODS has rows for ${expected.date}`);
    assert.equal(landing.odsFinal, expected.valid, `ODS holds every valid hit the generator sent for ${expected.date}`);
    assert.equal(landing.odsUnique, landing.odsFinal, "no hit doubled in ODS (count FINAL = uniqExact(WatchID))");
    assert.equal(landing.odsView, landing.odsFinal, "ods.event_v agrees");
    assert.equal(landing.errors, expected.invalid, "each invalid hit of the day is in ods.event_errors once");
    assert.equal(landing.odsFinal + landing.errors, messages - poisons, "every message of the day that is not a poison is an event or an error row");
    assert.equal(landing.stgOffsets, messages - poisons, "stg holds every non-poison offset of the day at least once");
    assert.ok(landing.stgRows >= landing.stgOffsets, "stg may hold replays");
    assert.equal(landing.deadLetters, poisons, "the day's dead letters are its poisons, no more");
    return { ranges, landing, messages, watch };
  } finally {
    await watch.stop();
  }
}
