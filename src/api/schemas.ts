// Zod schemas of every request and response, in Airflow's public API v2 field names. They validate
// input, type the serialisers, and become the components of the OpenAPI document.
import { z } from "zod";
import { RUN_STATES, TASK_STATES } from "../runner/types.ts";

// Identifiers: ASCII only, no slashes or control characters, bounded length. Run ids may carry the
// ':' '+' of an ISO timestamp (Airflow's manual__2024-01-01T00:00:00+00:00).
const ID_MAX = 250;
export const dagIdSchema = z
  .string()
  .max(ID_MAX, `must be at most ${ID_MAX} characters`)
  .regex(/^[A-Za-z0-9_.-]+$/, "may contain only letters, digits, '_', '.' and '-'")
  .refine((id) => !/^\.+$/.test(id), "must not be only dots (it could not be addressed in a URL)");
export const runIdSchema = z
  .string()
  .max(ID_MAX, `must be at most ${ID_MAX} characters`)
  .regex(/^[A-Za-z0-9_.:+~-]+$/, "may contain only letters, digits and _ . : + ~ -")
  .refine((id) => !/^\.+$/.test(id), "must not be only dots (it could not be addressed in a URL)");
export const taskIdSchema = dagIdSchema;
export const variableKeySchema = dagIdSchema;

const isoDate = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date-time with a zone, e.g. 2026-01-01T00:00:00Z" })
  .describe("ISO 8601 date-time");
// Postgres has no year 0 and JavaScript dates end in 275760: keep input dates in a sane range.
const inputIsoDate = isoDate.refine((text) => {
  const year = new Date(text).getUTCFullYear();
  return year >= 1900 && year <= 9999;
}, "must be between the years 1900 and 9999");
const nullableIsoDate = isoDate.nullable();

export const dagPathParams = z.object({ dag_id: dagIdSchema }).strict();
export const runPathParams = z.object({ dag_id: dagIdSchema, dag_run_id: runIdSchema }).strict();
export const taskPathParams = runPathParams.extend({ task_id: taskIdSchema }).strict();
export const logPathParams = taskPathParams
  .extend({ try_number: z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "try numbers start at 1").max(1_000_000) })
  .strict();
export const variablePathParams = z.object({ variable_key: variableKeySchema }).strict();

export const pageQuery = z
  .object({
    limit: z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "must be at least 1").max(1000, "must be at most 1000").default(100),
    offset: z.coerce
      .number({ error: "must be a number" })
      .int("must be a whole number")
      .min(0, "must not be negative")
      .max(1_000_000_000, "must be at most 1000000000")
      .default(0),
  })
  .strict();

export const listDagsQuery = pageQuery
  .extend({ paused: z.enum(["true", "false"]).optional().describe("only paused (true) or unpaused (false) DAGs") })
  .strict();

export const listRunsQuery = pageQuery
  .extend({
    state: z.enum(RUN_STATES).optional(),
    order_by: z
      .enum(["queued_at", "-queued_at", "id", "-id"])
      .default("-queued_at")
      .describe("sort by queue time; '-' for newest first (the default). 'id' is an alias of queued_at"),
  })
  .strict();

export const waitQuery = z
  .object({
    timeout: z.coerce
      .number({ error: "must be a number of seconds" })
      .min(0, "must not be negative")
      .max(3600, "must be at most 3600 seconds")
      .default(60)
      .describe("seconds to wait for a terminal state before answering with the current state"),
  })
  .strict();

export const triggerRunBody = z
  .object({
    dag_run_id: runIdSchema.nullable().optional(),
    logical_date: inputIsoDate.nullable().optional().describe("required-but-nullable in Airflow 3; may be omitted here"),
    conf: z.record(z.string(), z.unknown()).nullable().optional(),
    note: z.string().max(10_000).nullable().optional(),
  })
  .strict();

export const dagPatchBody = z.object({ is_paused: z.boolean() }).strict();

/** Airflow's DAGRunPatchBody: a run marked failed or success, and/or its note. */
export const dagRunPatchBody = z
  .object({
    state: z
      .enum(["queued", "success", "failed"])
      .optional()
      .describe("success or failed ends the run (and its open child runs) in that state; queued is refused: clear task instances instead"),
    note: z.string().max(10_000).nullable().optional(),
  })
  .strict();

export const dagRunPatchQuery = z.object({
  update_mask: z
    .union([z.array(z.enum(["state", "note"])), z.enum(["state", "note"])])
    .optional()
    .describe("which fields of the body to apply (all present ones when omitted)"),
});

/** Airflow's ClearTaskInstancesBody, the subset with a meaning here (one run at a time). */
export const clearTaskInstancesBody = z
  .object({
    dry_run: z.boolean().default(true).describe("Airflow's default: only list what would be cleared"),
    dag_run_id: runIdSchema.nullable().optional().describe("required here: clears act on one run"),
    task_ids: z.array(z.string().min(1).max(250)).nullable().optional(),
    only_failed: z.boolean().default(true),
    only_running: z.literal(false).default(false).describe("clearing running task instances is not supported"),
    include_upstream: z.boolean().default(false),
    include_downstream: z.boolean().default(false),
    include_future: z.literal(false).default(false),
    include_past: z.literal(false).default(false),
    reset_dag_runs: z.boolean().default(true),
    start_date: inputIsoDate.nullable().optional(),
    end_date: inputIsoDate.nullable().optional(),
  })
  .strict();

const jsonishValue = z
  .union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())])
  .describe("a string is stored as is; any other JSON value is stored as its JSON text");

export const variableBody = z
  .object({
    key: variableKeySchema,
    value: jsonishValue,
    description: z.string().max(10_000).nullable().optional(),
  })
  .strict();

export const variablePatchBody = z
  .object({
    key: variableKeySchema.optional().describe("if present, must equal the key in the path"),
    value: jsonishValue.optional(),
    description: z.string().max(10_000).nullable().optional(),
  })
  .strict();

export const variablePatchQuery = z
  .object({
    update_mask: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe("comma-separated or repeated list of fields to update: value, description"),
  })
  .strict();

// ---- responses ----

export const dagResponse = z.object({
  dag_id: z.string(),
  dag_display_name: z.string(),
  description: z.string().nullable(),
  is_paused: z.boolean(),
  is_stale: z.boolean(),
  fileloc: z.string(),
  timetable_summary: z.string().nullable(),
  max_active_runs: z.number().int(),
  exclusive_resources: z.array(z.string()).describe("named resources each run of this DAG holds exclusively (runner extension)"),
  tags: z.array(z.object({ name: z.string(), dag_id: z.string() })),
  owners: z.array(z.string()),
  task_ids: z.array(z.string()).describe("extension: the DAG's task ids in declaration order"),
  params_schema: z.unknown().describe("extension: JSON Schema of the conf the DAG accepts"),
});

export const dagCollection = z.object({ dags: z.array(dagResponse), total_entries: z.number().int() });

export const dagRunResponse = z.object({
  dag_run_id: z.string(),
  dag_id: z.string(),
  logical_date: nullableIsoDate,
  queued_at: nullableIsoDate,
  start_date: nullableIsoDate,
  end_date: nullableIsoDate,
  duration: z.number().nullable().describe("seconds"),
  run_after: isoDate,
  run_type: z.enum(["manual", "scheduled", "operator_triggered"]),
  state: z.enum(RUN_STATES),
  triggered_by: z.string().nullable(),
  conf: z.record(z.string(), z.unknown()),
  note: z.string().nullable(),
  dag_display_name: z.string(),
  task_ids: z.array(z.string()).describe("extension: the manifest declared at creation"),
  parent_dag_id: z.string().nullable().describe("extension: set when a waiting trigger created this run"),
  parent_dag_run_id: z.string().nullable(),
  waiting_for: z.string().nullable().describe("why a queued run has not started: the exclusive resource and the run holding it (runner extension)"),
  parent_task_id: z.string().nullable(),
});

export const dagRunCollection = z.object({ dag_runs: z.array(dagRunResponse), total_entries: z.number().int() });

export const taskInstanceResponse = z.object({
  id: z.string().describe("dag_id/dag_run_id/task_id"),
  task_id: z.string(),
  task_display_name: z.string(),
  dag_id: z.string(),
  dag_display_name: z.string(),
  dag_run_id: z.string(),
  map_index: z.literal(-1),
  logical_date: nullableIsoDate,
  start_date: nullableIsoDate,
  end_date: nullableIsoDate,
  duration: z.number().nullable().describe("seconds"),
  state: z.enum(TASK_STATES).nullable(),
  try_number: z.number().int(),
  max_tries: z.number().int().describe("retries allowed (Airflow's meaning): up to max_tries + 1 tries"),
  hostname: z.string().nullable().describe("the worker that ran the latest try"),
  note: z.string().nullable(),
  error: z.string().nullable().describe("extension: the latest try's error"),
  child_dag_id: z.string().nullable().describe("extension: for a waiting trigger, the child run it started"),
  child_dag_run_id: z.string().nullable(),
});

export const taskInstanceCollection = z.object({
  task_instances: z.array(taskInstanceResponse),
  total_entries: z.number().int(),
});

export const logResponse = z.object({
  content: z.array(z.object({ timestamp: isoDate, event: z.string(), level: z.string() })),
  continuation_token: z.null(),
});

export const variableResponse = z.object({
  key: z.string(),
  value: z.string(),
  description: z.string().nullable(),
  is_encrypted: z.literal(false),
  updated_at: isoDate.describe("extension"),
});

export const variableCollection = z.object({ variables: z.array(variableResponse), total_entries: z.number().int() });

export const variableChangeResponse = z.object({
  key: z.string(),
  old_value: z.string().nullable(),
  new_value: z.string().nullable(),
  changed_at: isoDate,
  changed_by: z.string(),
  dag_id: z.string().nullable(),
  dag_run_id: z.string().nullable(),
});

export const variableHistoryResponse = z.object({
  changes: z.array(variableChangeResponse).describe("oldest first"),
  total_entries: z.number().int(),
});

const componentStatus = z.enum(["healthy", "unhealthy"]);
export const healthResponse = z.object({
  metadatabase: z.object({ status: componentStatus }),
  scheduler: z.object({ status: componentStatus, latest_scheduler_heartbeat: nullableIsoDate }),
});

export const problemResponse = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  field: z.string().optional().describe("the request field the problem is about"),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  request_id: z.string().optional(),
});

export type DagResponse = z.infer<typeof dagResponse>;
export type DagRunResponse = z.infer<typeof dagRunResponse>;
export type TaskInstanceResponse = z.infer<typeof taskInstanceResponse>;
export type VariableResponse = z.infer<typeof variableResponse>;
export type VariableChangeResponse = z.infer<typeof variableChangeResponse>;
export type LogResponse = z.infer<typeof logResponse>;

// GET /api/v2/system/schema: the world's schema status (computed by src/world/schema-status.ts).
const checksum = z.string().nullable();
export const schemaStatusResponse = z.object({
  status: z.enum(["in_sync", "drift", "no_build"]),
  drift: z.boolean().describe("true when any file is changed, new or removed against the world's build"),
  world_position: z.string().nullable(),
  build: z
    .object({ dag_id: z.string(), dag_run_id: z.string(), applied_at: z.string(), server_version: z.string() })
    .nullable()
    .describe("the run whose applied DDL is the world's build (the latest run that applied DDL)"),
  summary: z.object({ unchanged: z.number().int(), changed: z.number().int(), new: z.number().int(), removed: z.number().int() }),
  files: z.array(
    z.object({
      file: z.string(),
      drift: z.enum(["changed", "new", "removed"]).nullable(),
      current_checksum: checksum.describe("sha256 of the file in sql/ddl/ now; null when removed"),
      built_checksum: checksum.describe("sha256 the world was built with; null when never applied"),
      applied_at: z.string().nullable(),
      dag_run_id: z.string().nullable(),
      task_id: z.string().nullable(),
      server_version: z.string().nullable(),
    }),
  ),
  catalogue: z
    .object({
      recorded_by_run: z.string().nullable(),
      nodes_checked: z.array(z.string()),
      unreachable: z.record(z.string(), z.string()),
      missing: z.array(
        z.object({
          kind: z.enum(["missing_database", "missing_table", "missing_column", "changed_type"]),
          node: z.string(),
          name: z.string(),
          detail: z.string(),
        }),
      ),
    })
    .describe("the live system.columns of every node against the catalogue the world was built with; anything missing is drift"),
  platform: z.object({
    node: z.string(),
    version: z.string().nullable(),
    has_sql_roles: z.boolean().nullable(),
    has_json_functions: z.boolean().nullable(),
    has_date_time64: z.boolean().nullable(),
    has_sql_dictionaries: z.boolean().nullable(),
    error: z.string().nullable(),
  }),
  note: z.string(),
});
export type SchemaStatusResponse = z.infer<typeof schemaStatusResponse>;
