// The loader's options: validated by one zod schema and returned frozen and fully defaulted, so
// every module reads numbers it can trust. Nothing here reads the environment; the caller (a
// future stand service) passes what stand.yaml says.
import { z } from "zod";

const positiveInt = z.number().int().positive();

const flushSchema = z
  .object({
    /** A table's buffer flushes once it holds this many rows. Keep it below the server's
     * max_insert_block_size (1,048,576): a batch must be one block for its INSERT to be all or nothing. */
    maxRows: positiveInt.max(1_000_000).default(20_000),
    /** … or this many bytes of serialised rows. */
    maxBytes: positiveInt.default(16 * 1024 * 1024),
    /** … or when its oldest row has waited this long. */
    maxAgeMs: positiveInt.default(500),
  })
  .strict();

const backoffSchema = z
  .object({
    initialMs: positiveInt.default(250),
    maxMs: positiveInt.default(30_000),
    multiplier: z.number().min(1).default(2),
    /** Fraction of each delay drawn at random ("equal jitter"): 0.5 → the delay is in [d/2, d]. */
    jitter: z.number().min(0).max(1).default(0.5),
  })
  .strict();

/** Shape limits of a "json-object" value (decode.ts; docs/loader.md has what 18.16 survives):
 * a value past one is a dead letter with that limit's reason, before any INSERT. */
const shapeLimitsSchema = z
  .object({
    /** Nesting levels, the outer object included (18.16 dies at 29,062). */
    maxDepth: positiveInt.max(20_000).default(1000),
    /** Object members at every level. */
    maxFields: positiveInt.default(10_000),
    /** Bytes of one key as written (escapes included). */
    maxKeyBytes: positiveInt.default(1024),
    /** Bytes of one string value as written. */
    maxStringBytes: positiveInt.default(256 * 1024),
    /** Characters of one number (sign, point and exponent included). */
    maxNumberChars: positiveInt.default(256),
  })
  .strict();

/** A batch whose INSERT lost its connection and left the node not answering (loader-core.ts). */
const killsServerSchema = z
  .object({
    /** Deaths in a row of the same batch before it is salvaged as suspect. */
    suspectAfter: positiveInt.default(2),
    /** Parts a slice that killed the node is split in: deaths per killer row ≈ log_ways(rows). */
    splitWays: positiveInt.min(2).max(64).default(16),
    /** How long a ping may take before the node counts as not answering. */
    pingTimeoutMs: positiveInt.default(2000),
    /** How long a suspect salvage waits for the node to answer again between tries. */
    nodeBackTimeoutMs: positiveInt.default(120_000),
    nodeBackPollMs: positiveInt.default(250),
  })
  .strict();

/** What a json-object row stores beside its promoted columns (docs/loader.md, "Capture modes"). */
export const CAPTURE_MODES = ["full", "json_only", "raw_only", "extracted_only"] as const;
export type CaptureMode = (typeof CAPTURE_MODES)[number];
/** How rows are sent: RowBinary encoded by the loader from the table's columns, or JSONEachRow parsed by the server. */
export const INSERT_FORMATS = ["row_binary", "json_each_row"] as const;
export type InsertFormat = (typeof INSERT_FORMATS)[number];

/** A `db.table` name, as config keys and DDL name tables. */
const tableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/, "a table is named db.table (letters, digits, _)");

/** Per-table options (keys: db.table): the capture mode when its DDL declares none, and Kafka headers promoted to columns. */
const tableOptionsSchema = z
  .object({
    captureMode: z.enum(CAPTURE_MODES).optional(),
    /** Kafka header name → the column its value (UTF-8) lands in. */
    headers: z.record(z.string().min(1).max(256), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a column name is letters, digits and _")).optional(),
  })
  .strict();

/** The landing table of each world topic (src/loader/routes.ts): the routers read it at every
 * message, so a hot reload sends the messages read after it to the new table. */
const routesSchema = z
  .object({
    /** hits land here on the node that owns their partition (p mod nodes). */
    hits: tableName.default("stg.hits_in"),
    /** orders land here on the first node. */
    orders: tableName.default("stg.orders_raw_dist"),
  })
  .strict();

export const loaderConfigSchema = z
  .object({
    /** A message value larger than this is dead-lettered as too_large without being parsed. */
    maxMessageBytes: positiveInt.default(1024 * 1024),
    /** At most this much of a message value is kept in its dead letter. */
    rawCapBytes: positiveInt.default(64 * 1024),
    /** At most this much of a server error text is kept in a dead letter. */
    errorTextCapBytes: positiveInt.default(4096),
    /** Inserts one salvage may spend on a rejected batch before the rest is held for the next cycle. */
    salvageInsertBudget: positiveInt.default(256),
    /** After this many holds in a row by code 252 of a table's batch with the same first row, the
     * next flush splits that batch in halves (loader-core.ts says why). */
    tooManyPartsSplitAfter: positiveInt.default(3),
    shapeLimits: shapeLimitsSchema.default(() => shapeLimitsSchema.parse({})),
    killsServer: killsServerSchema.default(() => killsServerSchema.parse({})),
    flush: flushSchema.default(() => flushSchema.parse({})),
    /** The default insert path (docs/loader.md says why RowBinary). A table whose columns the
     * encoder cannot write (a type it does not know) goes JSONEachRow, said at start. */
    insertFormat: z.enum(INSERT_FORMATS).default("row_binary"),
    /** The capture mode of a table whose DDL declares none and that `tables` does not name. The
     * seed's default is full (the payload in a JSON column); ClickHouse 18.16 has no JSON type, so
     * ours is raw_only: the payload in _raw, byte for byte, what the world has always stored. */
    captureMode: z.enum(CAPTURE_MODES).default("raw_only"),
    tables: z.record(tableName, tableOptionsSchema).default({}),
    /** Where a held batch goes once ClickHouse reports its table absent (the original target kept in
     * its _target_table column), on the same node; none: such rows are held until the table is back. */
    defaultTable: tableName.optional(),
    routes: routesSchema.default(() => routesSchema.parse({})),
    backoff: backoffSchema.default(() => backoffSchema.parse({})),
  })
  .strict()
  .refine((c) => c.backoff.maxMs >= c.backoff.initialMs, { message: "backoff.maxMs must be at least backoff.initialMs" });

export type LoaderConfigInput = z.input<typeof loaderConfigSchema>;
export type LoaderConfig = Readonly<z.output<typeof loaderConfigSchema>>;

/** Validates and defaults loader options; throws a zod error naming each bad field. */
export function compileLoaderConfig(input: LoaderConfigInput = {}): LoaderConfig {
  const parsed = loaderConfigSchema.parse(input);
  Object.freeze(parsed.flush);
  Object.freeze(parsed.shapeLimits);
  Object.freeze(parsed.killsServer);
  Object.freeze(parsed.backoff);
  Object.freeze(parsed.routes);
  return Object.freeze(parsed);
}
