// The connections routes' shapes: Airflow's ConnectionBody (validated as strictly as Airflow does,
// extra a JSON object's text), its responses with the password and secret-looking extra keys
// masked, and how a body changes a stored connection (update_mask, and "***" meaning "keep the
// value you masked", as Airflow's secrets masker merges a form sent back unchanged).
import { z } from "zod";
import { CONNECTION_SORT_FIELDS, type ConnectionFields, type ConnectionRecord, type ConnectionTestRecord } from "../../runner/index.ts";
import { maskSecrets } from "../audit.ts";
import { ApiProblem } from "../problem.ts";
import { isoDate, limitParam, pageQuery } from "../schemas.ts";

export const MASK = "***";

/** Paths of Airflow's own under /api/v2/connections/: a connection of such an id could not be addressed. */
const RESERVED_IDS = ["test", "defaults", "enqueue-test"];

export const connectionIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .regex(/^[A-Za-z0-9_.-]+$/, "may contain only letters, digits, '_', '.' and '-'")
  .refine((id) => !/^\.+$/.test(id), "must not be only dots (it could not be addressed in a URL)")
  .refine((id) => !RESERVED_IDS.includes(id), `must not be ${RESERVED_IDS.map((r) => `'${r}'`).join(", ")}: /api/v2/connections/<that> is another of Airflow's calls`);

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`).nullable().optional();

/** Airflow's rule: a JSON object's text ("" reads as "{}"). */
const extraText = z
  .string()
  .max(65_536, "must be at most 65536 characters")
  .transform((v) => (v === "" ? "{}" : v))
  .refine((v) => {
    try {
      const parsed: unknown = JSON.parse(v);
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
    } catch {
      return false;
    }
  }, 'The `extra` field must be a valid JSON object (e.g., {"key": "value"})')
  .nullable()
  .optional();

const connectionFieldsShape = {
  connection_id: connectionIdSchema,
  conn_type: z.string().min(1, "must not be empty").max(500, "must be at most 500 characters"),
  description: text(5000),
  host: text(500),
  login: text(500),
  schema: text(500),
  port: z.number({ error: "must be a whole number or null" }).int("must be a whole number").min(0, "must be a port, 0 to 65535").max(65_535, "must be a port, 0 to 65535").nullable().optional(),
  password: text(5000),
  extra: extraText,
  team_name: z.null({ error: "teams are not supported: leave team_name null" }).optional(),
};

/** Airflow's ConnectionBody. */
export const connectionBody = z.object(connectionFieldsShape).strict();
export type ConnectionBody = z.output<typeof connectionBody>;

/** Airflow's ConnectionTestRequestBody (enqueue-test): ConnectionBody and how the test is dispatched. */
export const connectionTestRequestBody = z
  .object({
    ...connectionFieldsShape,
    commit_on_success: z.boolean().default(false).describe("save or update the connection when the test succeeds"),
    executor: z.null({ error: "this runner tests a connection itself, at once: it has no executors to name" }).optional(),
    queue: z.string().max(250).nullable().optional().describe("accepted and unused: the test runs in the process that takes the call"),
  })
  .strict();

/** The fields update_mask may name (connection_id and team_name are accepted and never change). */
const MASKABLE = ["connection_id", "conn_type", "description", "host", "login", "schema", "port", "password", "extra", "team_name"] as const;
type Maskable = (typeof MASKABLE)[number];
type Changeable = Exclude<Maskable, "connection_id" | "team_name">;
const CHANGEABLE: readonly Changeable[] = ["conn_type", "description", "host", "login", "schema", "port", "password", "extra"];

/** Repeated (?x=a&x=b) or comma separated (?x=a,b). */
const listParam = <T extends z.ZodType>(item: T) =>
  z.preprocess((v: unknown): unknown => {
    if (v === undefined) return undefined;
    const values = Array.isArray(v) ? (v as unknown[]) : [v];
    return values.flatMap((x): unknown[] => (typeof x === "string" ? x.split(",").map((s) => s.trim()).filter(Boolean) : [x]));
  }, z.array(item).max(50));

export const connectionPatchQuery = z
  .object({ update_mask: listParam(z.enum(MASKABLE, { error: `may name only ${MASKABLE.join(", ")}` })).optional() })
  .strict();

const orderValue = z.enum([...CONNECTION_SORT_FIELDS, ...CONNECTION_SORT_FIELDS.map((f) => `-${f}` as const)], {
  error: `sorts by ${CONNECTION_SORT_FIELDS.join(", ")} (a leading - for descending)`,
});
const pattern = z.string().max(1000).refine((v) => !v.includes("\u0000"), "must not contain a NUL character").optional();

export const connectionsQuery = pageQuery
  .extend({
    limit: limitParam(50),
    order_by: listParam(orderValue).default(["id"]),
    connection_id_pattern: pattern,
    connection_id_prefix_pattern: pattern,
  })
  .strict();

// every stored or stand connection id has these characters: another could name none
export const connectionPathParams = z
  .object({ connection_id: z.string().min(1).max(250).regex(/^[A-Za-z0-9_.-]+$/, "may contain only letters, digits, '_', '.' and '-'") })
  .strict();

export const connectionResponse = z.object({
  connection_id: z.string(),
  conn_type: z.string(),
  description: z.string().nullable(),
  host: z.string().nullable(),
  login: z.string().nullable(),
  schema: z.string().nullable(),
  port: z.number().int().nullable(),
  password: z.string().nullable().describe(`"${MASK}" when one is set: passwords are never shown`),
  extra: z.string().nullable().describe(`secret-looking keys' values are "${MASK}"`),
  team_name: z.null(),
  read_only: z.boolean().describe("extension: true for the stand's own services, which PATCH and DELETE refuse"),
});
export const connectionCollection = z.object({ connections: z.array(connectionResponse), total_entries: z.number().int() });
export const connectionTestResponse = z.object({ status: z.boolean(), message: z.string() });
export const connectionTestQueuedResponse = z.object({ token: z.string(), connection_id: z.string(), state: z.string() });
export const asyncConnectionTestResponse = z.object({
  token: z.string(),
  connection_id: z.string(),
  state: z.string(),
  result_message: z.string().nullable(),
  created_at: isoDate,
});

/** A connection's extra with secret-looking keys masked; text that is not a JSON object is shown as is (Airflow). */
export function maskedExtraText(extra: string | null): string | null {
  if (extra === null) return null;
  try {
    const parsed: unknown = JSON.parse(extra);
    return typeof parsed === "object" && parsed !== null ? JSON.stringify(maskSecrets(parsed)) : extra;
  } catch {
    return extra;
  }
}

export function serializeConnection(c: ConnectionRecord): z.infer<typeof connectionResponse> {
  return {
    connection_id: c.connectionId,
    conn_type: c.connType,
    description: c.description,
    host: c.host,
    login: c.login,
    schema: c.schema,
    port: c.port,
    password: c.password === null ? null : MASK,
    extra: maskedExtraText(c.extra),
    team_name: null,
    read_only: c.readOnly,
  };
}

export function serializeTest(t: ConnectionTestRecord): z.infer<typeof asyncConnectionTestResponse> {
  return { token: t.token, connection_id: t.connectionId, state: t.state, result_message: t.resultMessage, created_at: t.createdAt.toISOString() };
}

/** A body's fields as a new connection: what it leaves out is null. */
export function fieldsOfBody(body: ConnectionBody): ConnectionFields {
  return {
    connectionId: body.connection_id,
    connType: body.conn_type,
    description: body.description ?? null,
    host: body.host ?? null,
    login: body.login ?? null,
    schema: body.schema ?? null,
    port: body.port ?? null,
    password: body.password ?? null,
    extra: body.extra ?? null,
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const child = (v: unknown, key: string | number): unknown =>
  typeof key === "number" ? (Array.isArray(v) ? (v as unknown[])[key] : undefined) : isRecord(v) ? v[key] : undefined;

/** Airflow's secrets-masker merge: a "***" sent where reads showed "***" takes back the value it masked. */
function unmask(sent: unknown, stored: unknown, shown: unknown, depth = 0): unknown {
  if (sent === MASK && shown === MASK) return stored;
  if (depth > 8) return sent;
  if (Array.isArray(sent)) return sent.map((v, i) => unmask(v, child(stored, i), child(shown, i), depth + 1));
  if (isRecord(sent)) return Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, unmask(v, child(stored, k), child(shown, k), depth + 1)]));
  return sent;
}

/** A sent extra with its "***" values replaced by the stored ones they stand for. */
function mergeExtra(sent: string | null, stored: string | null): string | null {
  if (sent === null || stored === null) return sent;
  try {
    const old: unknown = JSON.parse(stored);
    return JSON.stringify(unmask(JSON.parse(sent), old, maskSecrets(old)));
  } catch {
    return sent;
  }
}

const FIELD_OF = {
  conn_type: "connType", description: "description", host: "host", login: "login", schema: "schema", port: "port", password: "password", extra: "extra",
} as const satisfies Record<Changeable, keyof ConnectionFields>;

/**
 * The stored connection after a body is applied, as Airflow's update: the fields the body gives
 * (and update_mask names, when given) change, the others stay; a password of "***" and extra
 * values of "***" under secret-looking keys keep the stored ones.
 */
export function applyBody(current: ConnectionFields, body: ConnectionBody, mask: readonly string[] | undefined): ConnectionFields {
  const next: ConnectionFields = { ...current };
  for (const field of CHANGEABLE) {
    const value = body[field];
    if (value === undefined || (mask !== undefined && mask.length > 0 && !mask.includes(field))) continue;
    if (field === "password") next.password = value === MASK ? current.password : body.password ?? null;
    else if (field === "extra") next.extra = mergeExtra(body.extra ?? null, current.extra);
    else Object.assign(next, { [FIELD_OF[field]]: value });
  }
  return next;
}

/** Every field replaced by the body's (what it leaves out becomes null), "***" still keeping the stored secret. */
export function replaceWithBody(current: ConnectionFields, body: ConnectionBody): ConnectionFields {
  const sent = fieldsOfBody(body);
  return { ...sent, password: sent.password === MASK ? current.password : sent.password, extra: mergeExtra(sent.extra, current.extra) };
}

export function assertIdMatches(body: ConnectionBody, connectionId: string): void {
  if (body.connection_id !== connectionId) {
    throw new ApiProblem(400, "The connection_id in the request body does not match the URL parameter", { field: "connection_id" });
  }
}
