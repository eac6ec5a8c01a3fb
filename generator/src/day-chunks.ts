// Days as chunks of encoded messages, for `batch`: each hit is written straight into a frame
// chunk as bytes (no per-hit string), and a chunk leaves once it holds about --batch-bytes.
import { DayRenderer, MAX_HIT_BYTES, World, type DayCounts } from "./day.ts";
import { FrameWriter, type FrameChunk } from "./frames.ts";
import type { WorldSize } from "./world.ts";

export interface ChunkJob {
  readonly seed: number;
  readonly size?: WorldSize;
  readonly day: number;
  readonly days: number;
  readonly limit: number;
  /** Frame bytes per chunk. */
  readonly chunkBytes: number;
}

export type ChunkEvent =
  /** Sent as each day is planned: its hits within the limit. */
  | { readonly type: "planned"; readonly day: number; readonly total: number }
  | { readonly type: "chunk"; readonly day: number; readonly chunk: FrameChunk }
  | { readonly type: "day"; readonly day: number; readonly date: string; readonly sent: number; readonly counts: DayCounts };

/**
 * Plans each day only when its turn comes: holding every day's plan at once costs a full
 * mark-compact of the heap, and a long batch would not fit at all.
 */
export function* generateChunks(job: ChunkJob): Generator<ChunkEvent> {
  const world = new World(job.seed, job.size);
  const writer = new FrameWriter(job.chunkBytes + MAX_HIT_BYTES);
  let budget = job.limit;
  for (let day = job.day; day < job.day + job.days && budget > 0; day++) {
    const renderer = new DayRenderer(world, day);
    const total = Math.min(renderer.total, budget);
    yield { type: "planned", day, total };
    for (let position = 0; position < total; position++) {
      const at = writer.begin(renderer.key(position), MAX_HIT_BYTES);
      writer.commit(renderer.write(position, writer.buffer, at));
      if (writer.size >= job.chunkBytes) yield { type: "chunk", day, chunk: writer.take() };
    }
    if (writer.messages > 0) yield { type: "chunk", day, chunk: writer.take() };
    budget -= total;
    yield { type: "day", day, date: renderer.date, sent: total, counts: renderer.counts };
  }
}
