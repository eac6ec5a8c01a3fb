// The canonical DDL files as data: their order and the checksum the schema ledger records.
// Shared by the task that applies them (tasks/ddl.ts) and the schema status route (src/world-api).
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { DDL_DIR } from "./constants.ts";
import type { TemplateValues } from "../clickhouse/index.ts";

/** The DDL files of `dir` (sql/ddl by default), by name: the order they are applied in. */
export async function listDdlFiles(dir: string = DDL_DIR): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".sql"))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Placeholders whose values are data rather than server fragments: they belong in the checksum. */
const DATA_PLACEHOLDERS = ["catalog.products_csv"];

export function ddlChecksum(text: string, values: TemplateValues): string {
  const hash = createHash("sha256").update(text);
  for (const name of DATA_PLACEHOLDERS) if (text.includes(`{{${name}}}`)) hash.update(`\0${name}\0${values[name] ?? ""}`);
  return hash.digest("hex");
}
