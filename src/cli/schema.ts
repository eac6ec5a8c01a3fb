// `runner schema status`: the schema ledger against sql/ddl/ (GET /api/v2/system/schema), one line
// per DDL file with its drift flag. Exit 1 on drift, so scripts can stop on it.
import type { SchemaStatus } from "../world/index.ts";
import { EXIT } from "./client.ts";
import type { CommandContext } from "./commands.ts";
import { table } from "./format.ts";

const short = (checksum: string | null) => (checksum === null ? null : checksum.slice(0, 12));

export function renderSchemaStatus(status: SchemaStatus): string {
  const p = status.platform;
  const platform = p.error === null ? `ClickHouse ${p.version} on ${p.node} (SQL roles: ${p.has_sql_roles ? "yes" : "no"})` : `not probed: ${p.error}`;
  const build = status.build ? `${status.build.dag_id}/${status.build.dag_run_id} at ${status.build.applied_at}` : "none";
  const rows = status.files.map((f) => [f.file, f.drift ?? (f.built_checksum === null ? "-" : "ok"), short(f.current_checksum), short(f.built_checksum), f.applied_at]);
  const s = status.summary;
  return [
    `schema: ${status.status} (world_position ${status.world_position ?? "not set"}; platform ${platform})`,
    `built by: ${build}`,
    table(["file", "drift", "current", "built with", "applied at"], rows),
    `${s.unchanged} unchanged, ${s.changed} changed, ${s.new} new, ${s.removed} removed`,
    `catalogue: checked on ${status.catalogue.nodes_checked.join(", ") || "no node"}` +
      `${Object.keys(status.catalogue.unreachable).length > 0 ? `; unreachable: ${Object.keys(status.catalogue.unreachable).join(", ")}` : ""}` +
      `; ${status.catalogue.missing.length} missing or changed` +
      status.catalogue.missing.slice(0, 20).map((m) => `\n  ${m.detail}`).join(""),
    status.note,
  ].join("\n");
}

export async function schemaStatus(ctx: CommandContext): Promise<number> {
  const status = await ctx.client.request<SchemaStatus>("GET", "api/v2/system/schema");
  ctx.print(ctx.json ? JSON.stringify(status, null, 2) : renderSchemaStatus(status));
  return status.drift ? EXIT.RUN_FAILED : EXIT.OK;
}
