// A played world for the DQ tests without Kafka (as test/etl/passport-world.test.ts builds the
// starting one): the generator's days 0 … days-1 and snapshots 0 … days-2 through its CLI to files,
// valid hits into ods.event, refused ones into ods.event_errors by the generator's own verdict, the
// snapshots landed in stg and parsed by orders_ingest's parse step, then dds and dm. Callers hold
// the world lock: it recreates the world databases of the test stand.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { classifyHit } from "../../generator/src/index.ts";
import { launchArgs, repoRoot } from "../../src/config/index.ts";
import { standWorldSize } from "../../src/world/index.ts";
import { runDdsTransform, runDmTransform, parseOrdersBatch } from "../../tasks/index.ts";
import { adminSession, quietIo, rebuildWorldWithoutIngest } from "./etl-world.ts";

const run = promisify(execFile);
const LOADED = "2026-07-01 00:00:00";

const number = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const text = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : JSON.stringify(v));

async function generate(dir: string, args: string[], name: string): Promise<string[]> {
  const file = path.join(dir, name);
  await run(process.execPath, launchArgs("generator/src/cli.ts", ...args, "--file", file), { cwd: repoRoot, maxBuffer: 16 << 20 });
  return (await readFile(file, "utf8")).split("\n").filter((line) => line !== "");
}

/** An ods.event row of a valid generated hit (UTCEventTime as ClickHouse's DateTime text). */
export function odsRow(hit: Record<string, unknown>): Record<string, unknown> {
  return { ...hit, UTCEventTime: text(hit.UTCEventTime).replace("T", " ").replace("Z", ""), _load_ts: LOADED };
}

function errorRow(hit: Record<string, unknown>, verdict: string): Record<string, unknown> {
  return {
    error_class: verdict, WatchID: number(hit.WatchID), VisitID: number(hit.VisitID), ClientID: number(hit.ClientID),
    EventDate: text(hit.EventDate), UTCEventTime: text(hit.UTCEventTime), EventType: text(hit.EventType), URL: text(hit.URL),
    Referer: text(hit.Referer), IPAddress: text(hit.IPAddress), ScreenWidth: number(hit.ScreenWidth), ScreenHeight: number(hit.ScreenHeight), _load_ts: LOADED,
  };
}

/** Builds the world of `days` played days (position = days) and its dds and dm; returns the valid hits. */
export async function buildPlayedWorld(days: number, log: (line: string) => void): Promise<Record<string, unknown>[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "dq-world-"));
  try {
    const [hits, snapshots] = await Promise.all([
      generate(dir, ["batch", "--day", "0", "--days", String(days), "--size", standWorldSize()], "hits.jsonl"),
      generate(dir, ["snapshot", "--day", "0", "--days", String(days - 1), "--size", standWorldSize()], "orders.jsonl"),
    ]);
    log(`generated ${hits.length} hits and ${snapshots.length} order documents for ${days} days`);
    await rebuildWorldWithoutIngest();
    const valid: Record<string, unknown>[] = [];
    const refused: object[] = [];
    for (const line of hits) {
      const hit = JSON.parse(line) as Record<string, unknown>;
      const verdict = classifyHit(hit);
      if (verdict === "valid") valid.push(hit);
      else refused.push(errorRow(hit, verdict));
    }
    const admin = adminSession();
    try {
      const settings = { insert_distributed_sync: 1, input_format_skip_unknown_fields: 1 } as const;
      for (let i = 0; i < valid.length; i += 20_000) await admin.insert("ods.event_dist", valid.slice(i, i + 20_000).map(odsRow), settings);
      await admin.insert("ods.event_errors_dist", refused, settings);
      await admin.insert("stg.orders_raw_dist", snapshots.map((raw) => ({ raw, kafka_topic: "orders", _load_id: "dq-snapshots", _load_ts: LOADED })), settings);
    } finally {
      await admin.close();
    }
    await parseOrdersBatch({ ...quietIo(), loadId: "dq-snapshots" });
    await runDdsTransform({ ...quietIo(), loadId: "dq-build-1" });
    await runDmTransform({ ...quietIo(), loadId: "dq-build-1" });
    return valid;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
