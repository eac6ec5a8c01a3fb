// The starting world of the passport through the ETL's own steps, without Kafka: the generator's
// 8 days and 7 order snapshots (its CLI, to files), hits routed to ODS by the generator's own
// verdict, snapshots landed in stg and parsed by orders_ingest's parse, then dds and dm, then
// check-clickhouse against data/world-inventory.json: every check green, every order valid, and
// a second ETL run changes no mart. The Kafka path is the world end-to-end test's job.
// Holds the world lock: it recreates the world databases.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { classifyHit } from "../../generator/src/invalid.ts";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { loadPassport } from "../../src/world/passport.ts";
import { formatCheckResult, loadExpectations, runClickHouseChecks } from "../../src/world-ops/checks.ts";
import { runDdsTransform, runDmTransform } from "../../tasks/etl.ts";
import { parseOrdersBatch } from "../../tasks/orders.ts";
import { snapshotAllViews } from "../../testkit/world/etl-marts.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { adminSession, quietIo, rebuildWorldWithoutIngest } from "../../testkit/world/etl-world.ts";

const run = promisify(execFile);
const LOADED = "2026-06-09 00:00:00";
let lock: WorldLock;
let dir: string;

async function generate(args: string[], file: string): Promise<string[]> {
  await run(process.execPath, launchArgs("generator/src/cli.ts", ...args, "--file", file), { cwd: repoRoot, maxBuffer: 16 << 20 });
  return (await readFile(file, "utf8")).split("\n").filter((line) => line !== "");
}

const number = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const text = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : JSON.stringify(v));

before(async () => {
  lock = await takeWorldLock();
  dir = await mkdtemp(path.join(tmpdir(), "etl-passport-"));
  const passport = await loadPassport();
  const [hits, snapshots] = await Promise.all([
    generate(["batch", "--day", "0", "--days", String(passport.days.length), "--size", passport.size], path.join(dir, "hits.jsonl")),
    generate(["snapshot", "--day", "0", "--days", String(passport.snapshots.length), "--size", passport.size], path.join(dir, "orders.jsonl")),
  ]);
  await rebuildWorldWithoutIngest();
  const admin = adminSession();
  try {
    const valid: object[] = [];
    const refused: object[] = [];
    for (const line of hits) {
      const hit = JSON.parse(line) as Record<string, unknown>;
      const verdict = classifyHit(hit);
      if (verdict === "valid") {
        valid.push({ ...hit, UTCEventTime: text(hit.UTCEventTime).replace("T", " ").replace("Z", ""), _load_ts: LOADED });
      } else {
        refused.push({
          error_class: verdict, WatchID: number(hit.WatchID), VisitID: number(hit.VisitID), ClientID: number(hit.ClientID),
          EventDate: text(hit.EventDate), UTCEventTime: text(hit.UTCEventTime), EventType: text(hit.EventType), URL: text(hit.URL),
          Referer: text(hit.Referer), IPAddress: text(hit.IPAddress), ScreenWidth: number(hit.ScreenWidth), ScreenHeight: number(hit.ScreenHeight), _load_ts: LOADED,
        });
      }
    }
    const settings = { insert_distributed_sync: 1, input_format_skip_unknown_fields: 1 } as const;
    for (let i = 0; i < valid.length; i += 20_000) await admin.insert("ods.event_dist", valid.slice(i, i + 20_000), settings);
    await admin.insert("ods.event_errors_dist", refused, settings);
    await admin.insert("stg.orders_raw_dist", snapshots.map((raw) => ({ raw, kafka_topic: "orders", _load_id: "passport-snapshots", _load_ts: LOADED })), settings);
  } finally {
    await admin.close();
  }
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await lock?.release();
});

test("every generated order snapshot parses as valid", async () => {
  const report = await parseOrdersBatch({ ...quietIo(), loadId: "passport-snapshots" });
  assert.ok(report.landed > 0);
  assert.equal(report.orders, report.landed, "one ods.order row per (order, snapshot)");
  assert.deepEqual(report.errors, {});
});

test("after dds and dm every check-clickhouse check is green against the passport, and a rerun changes no mart", async () => {
  await runDdsTransform({ ...quietIo(), loadId: "passport-etl-1" });
  await runDmTransform({ ...quietIo(), loadId: "passport-etl-1" });
  const results = await runClickHouseChecks({ expectations: await loadExpectations() });
  const red = results.filter((r) => !r.ok).map(formatCheckResult);
  assert.deepEqual(red, []);
  assert.ok(results.length > 30, `${results.length} checks ran`);

  const admin = adminSession();
  try {
    const first = await snapshotAllViews(admin);
    await runDdsTransform({ ...quietIo(), loadId: "passport-etl-2", dates: (await loadExpectations()).days.map((d) => d.date) });
    await runDmTransform({ ...quietIo(), loadId: "passport-etl-2" });
    const second = await snapshotAllViews(admin);
    for (const [view, snap] of Object.entries(second)) assert.deepEqual(snap.rows, first[view]?.rows, `${view} unchanged`);
  } finally {
    await admin.close();
  }
});
