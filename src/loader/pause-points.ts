// Pause points of a loader started with loader.fail_points (the test stand only): a fault test arms
// one over HTTP (POST /fail-points), the next flush cycle of that topic that reaches the point
// records it and waits until the test releases it (POST /fail-points/<id>/release). The test
// strikes in between (kill -9 the loader, stop a node, produce a poison) at that exact moment:
//   before_insert  a cycle took its due rows and is about to send its first INSERT
//   before_commit  every INSERT of the cycle returned (rows or dead letters placed); the commit of
//                  their offsets has not been sent
// Each armed point holds one cycle, once. A stopping loader releases every point.
import { z } from "zod";

export const LOADER_PAUSE_POINTS = ["before_insert", "before_commit"] as const;
export type LoaderPausePoint = (typeof LOADER_PAUSE_POINTS)[number];

export const armPauseBody = z
  .object({
    point: z.enum(LOADER_PAUSE_POINTS),
    topic: z.string().min(1).max(249),
    note: z.string().max(200).optional(),
  })
  .strict();
export type ArmPauseBody = z.infer<typeof armPauseBody>;

export interface PausePointState {
  id: number;
  point: LoaderPausePoint;
  topic: string;
  note: string | undefined;
  armedAt: string;
  /** When a cycle reached the point and began to wait, and what it held. */
  reachedAt: string | undefined;
  detail: string | undefined;
  releasedAt: string | undefined;
}

interface Armed {
  state: PausePointState;
  release: () => void;
  released: Promise<void>;
}

export class PausePoints {
  private readonly points: Armed[] = [];
  private nextId = 1;

  arm(body: ArmPauseBody, now = new Date()): PausePointState {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const state: PausePointState = { id: this.nextId++, ...body, note: body.note, armedAt: now.toISOString(), reachedAt: undefined, detail: undefined, releasedAt: undefined };
    this.points.push({ state, release, released });
    return { ...state };
  }

  /** Lets the cycle held at point `id` go on (or disarms it, if none reached it yet). */
  release(id: number, now = new Date()): PausePointState | undefined {
    const armed = this.points.find((p) => p.state.id === id);
    if (!armed) return undefined;
    armed.state.releasedAt ??= now.toISOString();
    armed.release();
    return { ...armed.state };
  }

  releaseAll(): void {
    for (const p of this.points) this.release(p.state.id);
  }

  list(): PausePointState[] {
    return this.points.map((p) => ({ ...p.state }));
  }

  /** Called by a topic's flush cycle at `point`: waits while an armed point of the topic holds it. */
  async hold(point: LoaderPausePoint, topic: string, detail: string): Promise<void> {
    const armed = this.points.find((p) => p.state.point === point && p.state.topic === topic && p.state.reachedAt === undefined && p.state.releasedAt === undefined);
    if (!armed) return;
    armed.state.reachedAt = new Date().toISOString();
    armed.state.detail = detail;
    await armed.released;
  }
}
