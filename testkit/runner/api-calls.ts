// docs/api.md's table of every call in Airflow's REST API (the vendored document, which the
// official client is generated from): served here, 501 (a concept this runner does not have, and
// why), or not served yet. `node --import tsx testkit/runner/api-calls.ts` prints it; test/api/api-calls-doc.test.ts
// fails when the table in docs/api.md differs from what the app mounts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { createApp, NOT_SERVED } from "../../src/api/index.ts";
import type { RunnerService } from "../../src/runner/index.ts";
import { pino } from "pino";

export const TABLE_START = "<!-- api-calls:start (testkit/runner/api-calls.ts writes this table) -->";
export const TABLE_END = "<!-- api-calls:end -->";

interface Operation {
  operationId?: string;
  tags?: string[];
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export function callsTable(): string {
  const doc = parseYaml(readFileSync(path.join(root, "vendor/airflow/v2-rest-api-generated.yaml"), "utf8")) as { paths: Record<string, Record<string, Operation>> };
  // the route declarations only: no request reaches this app, so no runner is needed
  const app = createApp({ runner: {} as RunnerService, token: "x".repeat(20), logger: pino({ level: "silent" }) });
  const ours = new Map(app.routeSpecs.filter((s) => s.tag !== "Not served").map((s) => [s.operationId, s]));
  const why = new Map(NOT_SERVED.flatMap((c) => c.calls.map(([, , id]) => [id, `501: no ${c.name}`] as const)));
  const rows = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).flatMap(([method, op]) => (op.operationId === undefined ? [] : [{ tag: op.tags?.[0] ?? "", id: op.operationId, call: `${method.toUpperCase()} \`${p}\`` }])),
  );
  rows.sort((a, b) => a.tag.localeCompare(b.tag) || a.id.localeCompare(b.id));
  const served = rows.filter((r) => ours.has(r.id)).length;
  const refused = rows.filter((r) => why.has(r.id)).length;
  const lines = [
    TABLE_START,
    `${rows.length} calls: ${served} served, ${refused} answer 501, ${rows.length - served - refused} not served yet.`,
    "",
    "| tag | call | operationId | here |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.tag} | ${r.call} | \`${r.id}\` | ${ours.has(r.id) ? "served" : (why.get(r.id) ?? "not yet (404)")} |`),
    TABLE_END,
  ];
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(callsTable());
