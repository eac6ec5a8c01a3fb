// Pause points of a loader started with loader.fail_points (the test stand only): a fault test arms
// one over HTTP (POST /fail-points), the next flush cycle of that topic that reaches the point
// records it and waits until the test releases it (POST /fail-points/<id>/release). The test
// strikes in between (kill -9 the loader, stop a node, produce a poison) at that exact moment:
//   before_insert  a cycle took its due rows and is about to send its first INSERT
//   before_commit  every INSERT of the cycle returned (rows or dead letters placed); the commit of
//                  their offsets has not been sent
// Each armed point holds one cycle, once. A stopping loader releases every point.
// The loader's test-only door: every test hook of this room is here (the points, and their HTTP routes).
import type { IncomingMessage, ServerResponse } from "node:http";
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

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const MAX_CONTROL_BODY = 4096;

/** Reads a small JSON body; undefined (and the answer sent) when it is too large or not JSON. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CONTROL_BODY) {
      answer(res, 413, { detail: `body over ${MAX_CONTROL_BODY} bytes` });
      return { ok: false };
    }
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown };
  } catch {
    // a body that is not JSON is the caller's error: answered 400 here
    answer(res, 400, { detail: "body is not JSON: send {\"point\": \"before_insert\"|\"before_commit\", \"topic\": \"hits\"}" });
    return { ok: false };
  }
}

/** The test stand's pause points over the loader's HTTP port: GET lists them, POST arms one,
 * POST /fail-points/<id>/release lets its cycle go on. 404 unless loader.fail_points is on. */
export async function serveFailPoints(req: IncomingMessage, res: ServerResponse, pausePoints: PausePoints | undefined, warn: (line: string, fields: Record<string, unknown>) => void): Promise<void> {
  if (!pausePoints) {
    answer(res, 404, { detail: "fail points are off on this loader (loader.fail_points: the test stand's config only)" });
    return;
  }
  if (req.method === "GET" && req.url === "/fail-points") {
    answer(res, 200, { points: pausePoints.list() });
    return;
  }
  if (req.method === "POST" && req.url === "/fail-points") {
    const body = await readJson(req, res);
    if (!body.ok) return;
    const parsed = armPauseBody.safeParse(body.value);
    if (!parsed.success) {
      answer(res, 400, { detail: parsed.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ") });
      return;
    }
    const armed = pausePoints.arm(parsed.data);
    warn("pause point armed", { pausePoint: armed });
    answer(res, 201, armed);
    return;
  }
  const release = /^\/fail-points\/(\d{1,9})\/release$/.exec(req.url ?? "");
  if (req.method === "POST" && release?.[1] !== undefined) {
    const released = pausePoints.release(Number(release[1]));
    if (released) warn("pause point released", { pausePoint: released });
    answer(res, released ? 200 : 404, released ?? { detail: `no pause point ${release[1]}` });
    return;
  }
  answer(res, 405, { detail: "fail points: GET /fail-points, POST /fail-points {point, topic}, POST /fail-points/<id>/release" });
}
