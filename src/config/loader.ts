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
  return Object.freeze(parsed);
}
