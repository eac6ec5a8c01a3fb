// The schema cache of the dynamic insert: each target's columns as system.columns gives them on
// the target's node, turned into an insert plan (which columns the RowBinary INSERT lists and how
// each is written, row-binary.ts) and the table's capture mode. The columns are read again before
// every flush of the table (one small query): a plan is rebuilt only when the answer changed, and
// its version moves then, so rows encoded against an older version are encoded again. A rejected
// RowBinary INSERT is the rows' own only when a fresh read shows the same columns
// (loader-core.ts).
//
// Capture mode (docs/loader.md, "Capture modes"), highest wins: the table's own declaration, a
// column comment `@capture_mode <mode>` in its DDL (18.16 has column comments, not table ones) >
// loader.options.tables["db.table"].captureMode > loader.options.captureMode. `full` and
// `json_only` store the payload in a JSON-type `_json` column; 18.16 has no JSON type, and the
// encoder writes none, so a table resolved to either is refused at start, naming the table.
import { CAPTURE_MODES, type CaptureMode, type InsertFormat, type LoaderConfig } from "../config/index.ts";
import { constantDefault, parseClickHouseType, typeName } from "./ch-types.ts";
import type { DecodeMode } from "./decode.ts";
import { columnFill, RowBinaryEncoder, type EncodedColumn, type EncoderPlan } from "./row-binary.ts";
import type { LoaderTarget } from "./types.ts";

/** One row of system.columns, the fields the plan needs. */
export interface ColumnRow {
  name: string;
  type: string;
  default_kind: string;
  default_expression: string;
  comment: string;
}

/** `db.table` of a target (its table may be written with backquotes or double quotes). */
export function splitTableName(table: string): { database: string; name: string } {
  const parts = table.split(".").map((p) => p.replace(/^[`"]|[`"]$/g, ""));
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new Error(`loader target table '${table}' is not db.table`);
  return { database: parts[0], name: parts[1] };
}

/** The plain `db.table` name config keys and messages use (a name of another shape as it is). */
export function plainTableName(table: string): string {
  return table.split(".").map((p) => p.replace(/^[`"]|[`"]$/g, "")).join(".");
}

const DECLARATION = /@capture_mode\s+([a-z_]+)/;

/** The capture mode a table's column comments declare; an unknown word is an error naming the column. */
export function declaredCaptureMode(table: string, columns: readonly ColumnRow[]): CaptureMode | undefined {
  let found: { mode: CaptureMode; column: string } | undefined;
  for (const column of columns) {
    const m = DECLARATION.exec(column.comment);
    if (m === null) continue;
    const mode = m[1] ?? "";
    if (!(CAPTURE_MODES as readonly string[]).includes(mode)) {
      throw new Error(`${table}: column ${column.name} declares @capture_mode ${mode}, which is none of ${CAPTURE_MODES.join(", ")}`);
    }
    if (found !== undefined && found.mode !== mode) throw new Error(`${table}: columns ${found.column} and ${column.name} declare different capture modes (${found.mode}, ${mode})`);
    found = { mode: mode as CaptureMode, column: column.name };
  }
  return found?.mode;
}

export interface ResolvedCapture {
  mode: CaptureMode;
  from: "ddl" | "table config" | "global default";
}

/** The table's capture mode; `columns` undefined or empty (not read, or the table is not there): config alone. */
export function resolveCaptureMode(table: string, columns: readonly ColumnRow[] | undefined, config: LoaderConfig): ResolvedCapture {
  const declared = columns === undefined ? undefined : declaredCaptureMode(table, columns);
  if (declared !== undefined) return { mode: declared, from: "ddl" };
  const configured = config.tables[table]?.captureMode;
  if (configured !== undefined) return { mode: configured, from: "table config" };
  return { mode: config.captureMode, from: "global default" };
}

/** Why a json-object table cannot run its capture mode here, or undefined when it can. */
export function captureModeProblem(table: string, capture: ResolvedCapture): string | undefined {
  if (capture.mode !== "full" && capture.mode !== "json_only") return undefined;
  return (
    `${table}: capture mode ${capture.mode} (from the ${capture.from}) stores the payload in a JSON-type _json column, ` +
    "and neither this server (ClickHouse 18.16 has no JSON type) nor the loader's encoder writes one; " +
    `declare raw_only or extracted_only in the table's DDL (a column comment '@capture_mode raw_only') or set loader.options.tables["${table}"].captureMode`
  );
}

/** How one target's rows are sent, for one version of its columns. */
export interface TablePlan {
  table: string;
  version: number;
  format: InsertFormat;
  capture: ResolvedCapture | undefined;
  /** Leading fields not stored (the capture mode's). */
  droppedFields: ReadonlySet<string>;
  /** The RowBinary encoder (row_binary only). */
  encoder: RowBinaryEncoder | undefined;
  /** The INSERT's column list, quoted (row_binary only). */
  columnList: string;
  /** What was decided for columns, said once per version (a column left to the server, a format fallback). */
  notes: string[];
}

const quote = (name: string) => `\`${name.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;

/** Builds the plan of `table` from its columns (undefined columns: the inserter cannot read them, so JSONEachRow). */
export function buildTablePlan(input: { table: string; columns: readonly ColumnRow[] | undefined; config: LoaderConfig; decodeMode: DecodeMode; version: number; skipUnknownFields: boolean }): TablePlan {
  const { table, columns, config, decodeMode, version, skipUnknownFields } = input;
  const json = decodeMode === "json-object";
  const capture = json ? resolveCaptureMode(table, columns, config) : undefined;
  const droppedFields = new Set<string>(capture !== undefined && capture.mode !== "raw_only" ? ["_raw"] : []);
  const notes: string[] = [];
  const base = { table, version, capture, droppedFields, notes };
  if (columns === undefined || columns.length === 0 || config.insertFormat === "json_each_row") {
    if (columns === undefined) notes.push(`${table}: JSONEachRow (this inserter reads no schema)`);
    else if (columns.length === 0) notes.push(`${table}: not there (system.columns lists no column)`);
    return { ...base, format: "json_each_row", encoder: undefined, columnList: "" };
  }
  const listed: EncodedColumn[] = [];
  const serverColumns = new Set<string>();
  for (const column of columns) {
    const type = parseClickHouseType(column.type);
    if (column.default_kind === "MATERIALIZED" || column.default_kind === "ALIAS") {
      serverColumns.add(column.name);
      continue;
    }
    if ("unsupported" in type) {
      serverColumns.add(column.name);
      notes.push(`${table}.${column.name}: ${type.unsupported} is the server's to fill (a row carrying it goes JSONEachRow)`);
      continue;
    }
    let constant: Buffer | undefined;
    if (column.default_kind === "DEFAULT") {
      constant = constantDefault(column.default_expression, type);
      if (constant === undefined) {
        serverColumns.add(column.name);
        notes.push(`${table}.${column.name}: DEFAULT ${column.default_expression} is evaluated by the server (a row carrying it goes JSONEachRow)`);
        continue;
      }
    }
    listed.push({ name: column.name, type, fill: columnFill(type, constant) });
  }
  if (listed.length === 0) {
    notes.push(`${table}: no column the encoder writes; JSONEachRow`);
    return { ...base, format: "json_each_row", encoder: undefined, columnList: "" };
  }
  const plan: EncoderPlan = { columns: listed, serverColumns, droppedFields, skipUnknownFields };
  return { ...base, format: "row_binary", encoder: new RowBinaryEncoder(plan), columnList: listed.map((c) => quote(c.name)).join(", ") };
}

/** One line saying how a plan sends its rows (the loader's start log). */
export function describePlan(plan: TablePlan): string {
  const capture = plan.capture === undefined ? "text rows" : `capture ${plan.capture.mode} (${plan.capture.from})`;
  const columns = plan.encoder === undefined ? "" : `, ${plan.encoder.plan.columns.length} columns (${plan.encoder.plan.columns.map((c) => `${c.name} ${typeName(c.type)}`).slice(0, 3).join(", ")}…)`;
  return `${plan.table}: ${plan.format === "row_binary" ? "RowBinary" : "JSONEachRow"}, ${capture}${columns}`;
}

/** Reads a target's columns on its node; undefined when the inserter cannot (a test double). */
export type ColumnReader = (target: LoaderTarget) => Promise<ColumnRow[]>;

/** The fingerprint two reads of a table's columns are compared by. */
export function columnsFingerprint(columns: readonly ColumnRow[]): string {
  return columns.map((c) => `${c.name}\t${c.type}\t${c.default_kind}\t${c.default_expression}\t${c.comment}`).join("\n");
}

/**
 * Plans per target, rebuilt when the columns changed. `refresh` reads the columns again and
 * answers the current plan; `current` answers the last one without a read.
 */
export class TablePlans {
  private readonly plans = new Map<string, { fingerprint: string; plan: TablePlan }>();
  private versions = 0;

  constructor(
    private readonly read: ColumnReader | undefined,
    private readonly decodeMode: DecodeMode,
    private readonly skipUnknownFields: boolean,
    private readonly onPlan: (plan: TablePlan) => void = () => undefined,
  ) {}

  /** Reads the target's columns and answers its plan (a new version when they changed or `config` did). */
  async refresh(key: string, target: LoaderTarget, config: LoaderConfig): Promise<TablePlan> {
    const table = plainTableName(target.table);
    const columns = this.read === undefined ? undefined : await this.read(target);
    // no columns: the table is not there; the INSERT (JSONEachRow) gets the server's own answer
    // (UNKNOWN_TABLE), which the default table and the hold act on
    const fingerprint = `${config.insertFormat}\n${config.captureMode}\n${config.tables[table]?.captureMode ?? ""}\n${columns === undefined ? "-" : columnsFingerprint(columns)}`;
    const known = this.plans.get(key);
    if (known !== undefined && known.fingerprint === fingerprint) return known.plan;
    const plan = buildTablePlan({ table, columns, config, decodeMode: this.decodeMode, version: ++this.versions, skipUnknownFields: this.skipUnknownFields });
    this.plans.set(key, { fingerprint, plan });
    this.onPlan(plan);
    return plan;
  }

  current(key: string): TablePlan | undefined {
    return this.plans.get(key)?.plan;
  }
}

/**
 * The start check of a loader's targets: each json-object table's capture mode resolved from its
 * columns, and the plan each target gets. Throws, naming every table, when a mode cannot run here.
 */
export async function checkTargets(read: ColumnReader, targets: readonly { target: LoaderTarget; decodeMode: DecodeMode }[], config: LoaderConfig, skipUnknownFields: boolean): Promise<TablePlan[]> {
  const problems: string[] = [];
  const plans: TablePlan[] = [];
  for (const { target, decodeMode } of targets) {
    const table = plainTableName(target.table);
    const columns = await read(target);
    if (decodeMode === "json-object") {
      const problem = captureModeProblem(table, resolveCaptureMode(table, columns, config));
      if (problem !== undefined) problems.push(`${problem} (node ${target.node})`);
    }
    plans.push(buildTablePlan({ table, columns, config, decodeMode, version: 0, skipUnknownFields }));
  }
  if (problems.length > 0) throw new Error(`the loader cannot start: ${problems.join("; ")}`);
  return plans;
}
