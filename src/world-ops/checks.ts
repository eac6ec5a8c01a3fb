// check-clickhouse: the queries in sql/checks/ (and the world's ODS facts, sql/facts/) run against the stand, each result compared with
// what it must be — the cluster layout from stand.yaml, and per-day counts from the world passport
// (data/world-inventory.json). Returns one typed result per comparison for a CLI to print; nothing
// here throws on a mismatch (a query that cannot run is a red result naming the file and account).
//
// Accounts: `reader` (readonly) for every query but one: cluster-fanout.sql uses the cluster()
// table function, which readonly mode refuses, so it runs as `lifecycle` (cluster introspection).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { connectClickHouse, type AccountKey, type StandClickHouse, quoteString, querySqlFile, readSqlFile, registeredSqlFiles } from "../clickhouse/index.ts";
import { loadStandConfig, repoRoot, type StandConfig } from "../config/index.ts";
import { passportPath, loadPassport, readOdsRefusedHitsPerDate, readOdsValidHitsPerDate } from "../world/index.ts";
import { errorMessage } from "../errors.ts";
import { compareDayCounts, compareLatestSnapshot, type CheckResult, type DayCountRows, type Expectations } from "./check-compare.ts";

export type { CheckResult, Expectations } from "./check-compare.ts";

export const CHECKS_DIR = path.join(repoRoot, "sql", "checks");

/** The queries of check-clickhouse, one file each in sql/checks/; a file there that is not listed
 * (or a name without its file) is an error when this module loads. */
export const STAND_CHECK_QUERIES = registeredSqlFiles(
  CHECKS_DIR,
  [
    "cluster-topology",
    "macros",
    "cluster-fanout",
    "distributed-cross-read",
    "ddl-queue-entries",
    "ddl-queue-entry",
    "dds-sessions-per-date",
    "dm-marts-per-date",
    "ods-orders-latest-snapshot",
  ],
  "a check-clickhouse query",
);
type StandCheckQuery = (typeof STAND_CHECK_QUERIES)[number];

/** The distributed DDL queue the stand's servers use (docs/stand.md). */
export const DDL_QUEUE_PATH = "/clickhouse/task_queue/ddl";
const DDL_ENTRY_BATCH = 16;

const passportExtras = z.object({
  days: z.array(z.object({ date: z.string(), valid_by_type: z.record(z.string(), z.number().int().min(0)).optional() })),
  snapshots: z.array(z.object({ date: z.string(), orders: z.number().int().min(0), statuses: z.record(z.string(), z.number().int().min(0)).optional() })),
});

/** What the checks compare with, from the passport (its schema, plus valid_by_type and snapshot statuses). */
export async function loadExpectations(file?: string): Promise<Expectations> {
  const passport = await loadPassport(file);
  const extras = passportExtras.parse(JSON.parse(await readFile(file ?? passportPath(passport.size), "utf8")));
  const byType = new Map(extras.days.map((d) => [d.date, d.valid_by_type]));
  const last = extras.snapshots.at(-1);
  return {
    days: passport.days.map((d) => ({ date: d.date, valid: d.valid, invalid: { ...d.invalid }, validByType: byType.get(d.date) })),
    lastSnapshot: last ? { date: last.date, orders: last.orders, statuses: last.statuses } : undefined,
  };
}

export interface ClickHouseChecksInput {
  expectations: Expectations;
  config?: StandConfig;
  signal?: AbortSignal;
  ddlQueuePath?: string;
  /** Hosts every DDL queue entry must have finished on, instead of the hosts each entry names (tests). */
  ddlQueueHosts?: number;
}

class CheckRun {
  readonly results: CheckResult[] = [];
  readonly signal: AbortSignal;

  constructor(
    readonly config: StandConfig,
    signal: AbortSignal | undefined,
    private readonly sessions = new Map<string, StandClickHouse>(),
  ) {
    this.signal = signal ?? new AbortController().signal;
  }

  /** A run of its own results over the same sessions: checks that run side by side keep their order. */
  lane(): CheckRun {
    return new CheckRun(this.config, this.signal, this.sessions);
  }

  session(account: AccountKey, node: string): StandClickHouse {
    const key = `${account}@${node}`;
    let session = this.sessions.get(key);
    if (!session) {
      session = connectClickHouse({ account, node, config: this.config });
      this.sessions.set(key, session);
    }
    return session;
  }

  /** Runs a check query; on failure records a red result named `name` and returns undefined. */
  async rows<Row>(name: string, file: `${StandCheckQuery}.sql`, account: AccountKey, node: string, values: Record<string, string> = {}): Promise<Row[] | undefined> {
    try {
      const sqlFile = await readSqlFile(path.join(CHECKS_DIR, file), "checkClickHouse");
      return await querySqlFile<Row>({ step: "checkClickHouse", clickhouse: this.session(account, node), file: sqlFile, values, signal: this.signal });
    } catch (err) {
      this.add(name, false, "the query runs", "it failed", errorMessage(err));
      return undefined;
    }
  }

  add(name: string, ok: boolean, expected: string, actual: string, detail = ""): void {
    this.results.push({ name, ok, expected, actual, detail });
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
  }
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

async function checkTopology(run: CheckRun): Promise<void> {
  const { config } = run;
  const expected = [...config.clickhouse.nodes]
    .sort((a, b) => a.shard - b.shard)
    .map((n) => {
      const host = n.host ?? config.bind_host;
      return `${n.shard}/1 ${IPV4.test(host) ? host : "*"}:${n.tcp_port}`;
    });
  for (const node of config.clickhouse.nodes) {
    const name = `cluster topology seen from ${node.name}`;
    const rows = await run.rows<{ shard: number; replica: number; host: string; port: number }>(name, "cluster-topology.sql", "reader", node.name, {
      cluster_name: quoteString(config.clickhouse.cluster),
    });
    if (!rows) continue;
    const actual = rows.map((r, i) => `${r.shard}/${r.replica} ${expected[i]?.includes(" *:") ? "*" : r.host}:${r.port}`);
    run.add(name, actual.join(", ") === expected.join(", "), expected.join(", "), actual.join(", ") || "(no such cluster)");
  }
}

async function checkMacros(run: CheckRun): Promise<void> {
  for (const node of run.config.clickhouse.nodes) {
    const name = `macros on ${node.name}`;
    const rows = await run.rows<{ macro: string; substitution: string }>(name, "macros.sql", "reader", node.name);
    if (!rows) continue;
    const expected = `cluster=${run.config.clickhouse.cluster} replica=${node.name} shard=${node.shard}`;
    const got = new Map(rows.map((r) => [r.macro, r.substitution]));
    const actual = ["cluster", "replica", "shard"].map((m) => `${m}=${got.get(m) ?? "(missing)"}`).join(" ");
    run.add(name, actual === expected, expected, actual);
  }
}

async function checkFanout(run: CheckRun): Promise<void> {
  const name = "cluster() query reaches every shard";
  const first = run.config.clickhouse.nodes[0]?.name ?? "";
  const rows = await run.rows<{ replicas: string[] }>(name, "cluster-fanout.sql", "lifecycle", first, {
    cluster_name: quoteString(run.config.clickhouse.cluster),
  });
  if (!rows) return;
  const expected = run.config.clickhouse.nodes.map((n) => n.name).sort().join(", ");
  const actual = (rows[0]?.replicas ?? []).join(", ");
  run.add(name, actual === expected, expected, actual || "(none)");
}

async function checkDistributedRead(run: CheckRun): Promise<void> {
  const seen: { node: string; through: number; local: number }[] = [];
  for (const node of run.config.clickhouse.nodes) {
    const rows = await run.rows<{ through_distributed: string; local_rows: string }>(
      `distributed cross-read from ${node.name}`, "distributed-cross-read.sql", "reader", node.name);
    if (!rows) return;
    seen.push({ node: node.name, through: Number(rows[0]?.through_distributed ?? 0), local: Number(rows[0]?.local_rows ?? 0) });
  }
  const sum = seen.reduce((s, n) => s + n.local, 0);
  const locals = seen.map((n) => `${n.node} ${n.local}`).join(", ");
  for (const n of seen) {
    const ok = n.through === sum && seen.every((s) => s.local > 0);
    run.add(`distributed cross-read from ${n.node} (ods.event_dist)`, ok, `${sum} rows (sum of local shards, each > 0)`, `${n.through} rows`, `local rows: ${locals}`);
  }
}

async function checkDdlQueue(run: CheckRun, queuePath: string, hostsOverride: number | undefined): Promise<void> {
  const name = "distributed DDL queue has no unfinished entries";
  const first = run.config.clickhouse.nodes[0]?.name ?? "";
  const entries = await run.rows<{ name: string; hosts: number }>(name, "ddl-queue-entries.sql", "reader", first, {
    ddl_queue_path: quoteString(queuePath),
  });
  if (!entries) return;
  const unfinished: string[] = [];
  // One query per entry (18.16 takes only `path = constant`); a few hundred entries, so in batches.
  for (let i = 0; i < entries.length; i += DDL_ENTRY_BATCH) {
    const batch = entries.slice(i, i + DDL_ENTRY_BATCH);
    const counts = await Promise.all(
      batch.map((entry) =>
        run.rows<{ finished: string }>(name, "ddl-queue-entry.sql", "reader", first, { entry_path: quoteString(`${queuePath}/${entry.name}`) }),
      ),
    );
    if (counts.some((rows) => rows === undefined)) return;
    batch.forEach((entry, j) => {
      const finished = Number(counts[j]?.[0]?.finished ?? 0);
      const hosts = hostsOverride ?? entry.hosts;
      if (finished < hosts) unfinished.push(`${entry.name} (${finished}/${hosts} hosts)`);
    });
  }
  const detail = unfinished.length > 0 ? `unfinished: ${unfinished.slice(0, 10).join(", ")}${unfinished.length > 10 ? ", …" : ""}` : `${entries.length} entries, all finished`;
  run.add(name, unfinished.length === 0, "0 unfinished", `${unfinished.length} unfinished`, detail);
}

/** The world's ODS facts (src/world/ods-facts.ts) in check-compare's shape; a red result when they cannot be read. */
async function odsFacts(run: CheckRun, node: string): Promise<Pick<DayCountRows, "events" | "errors">> {
  try {
    const ch = run.session("reader", node);
    const [valid, refused] = await Promise.all([readOdsValidHitsPerDate(ch), readOdsRefusedHitsPerDate(ch)]);
    const refusedByDate = new Map<string, number>();
    for (const r of refused) refusedByDate.set(r.d, (refusedByDate.get(r.d) ?? 0) + r.n);
    const dates = [...new Set([...valid.keys(), ...refusedByDate.keys()])].sort();
    return {
      events: dates.map((d) => ({ d, valid: valid.get(d) ?? 0, refused: refusedByDate.get(d) ?? 0 })),
      errors: refused.map((r) => ({ d: r.d, error_class: r.error_class, refused: r.n })),
    };
  } catch (err) {
    run.add("ODS valid and refused hits per day", false, "the query runs", "it failed", `sql/facts/ as reader on ${node}: ${errorMessage(err)}`);
    return {};
  }
}

async function checkWorldCounts(run: CheckRun, expectations: Expectations): Promise<void> {
  const first = run.config.clickhouse.nodes[0]?.name ?? "";
  // four independent reads, side by side (a red one is recorded by run.rows under its own name)
  const [{ events, errors }, sessions, marts, orders] = await Promise.all([
    odsFacts(run, first),
    run.rows<{ d: string; sessions: string; hits: string }>("DDS session hits per day", "dds-sessions-per-date.sql", "reader", first),
    run.rows<{ d: string; funnel_pageviews: string; funnel_cart_adds: string; funnel_purchases: string; traffic_pageviews: string }>(
      "DM event counts per day", "dm-marts-per-date.sql", "reader", first),
    run.rows<{ snapshot: string; status: string; orders: string }>("ODS orders of the newest snapshot", "ods-orders-latest-snapshot.sql", "reader", first),
  ]);
  for (const r of compareDayCounts(expectations, { events, errors, sessions, marts })) run.results.push(r);
  if (orders) for (const r of compareLatestSnapshot(expectations, orders)) run.results.push(r);
}

/** One line per result, for a CLI: "OK  name: actual" or "RED name: expected …, got …; detail". */
export function formatCheckResult(r: CheckResult): string {
  if (r.ok) return `OK  ${r.name}: ${r.actual}${r.detail ? ` (${r.detail})` : ""}`;
  return `RED ${r.name}: expected ${r.expected}, got ${r.actual}${r.detail ? `; ${r.detail}` : ""}`;
}

/** Every check-clickhouse check; results in a stable order (cluster first, then the world's counts). */
export async function runClickHouseChecks(input: ClickHouseChecksInput): Promise<CheckResult[]> {
  const run = new CheckRun(input.config ?? loadStandConfig(), input.signal);
  const checks: ((lane: CheckRun) => Promise<void>)[] = [
    checkTopology,
    checkMacros,
    checkFanout,
    checkDistributedRead,
    (lane) => checkDdlQueue(lane, input.ddlQueuePath ?? DDL_QUEUE_PATH, input.ddlQueueHosts),
    (lane) => checkWorldCounts(lane, input.expectations),
  ];
  try {
    // independent reads, side by side (the DDL queue's hundreds of entries and the world's counts
    // dominate); each in its own lane, so the results keep this order
    const lanes = await Promise.all(
      checks.map(async (check) => {
        const lane = run.lane();
        await check(lane);
        return lane.results;
      }),
    );
    return lanes.flat();
  } finally {
    await run.close();
  }
}
