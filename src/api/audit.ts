// The event log's writer for the API: after each change answered below 400 (a trigger, a mark, a
// clear, a pause, a variable written or deleted, a reparse, a login), one row with the route's
// operationId as the event, the person (the logged-in user, else the API token and its client),
// the DAG, run and task the path names (else the body's, else what the route put in res.locals), and the request body as `extra` with secrets masked
// (and a task group the path names).
// Dry runs are not changes and are not written. A failed write is logged, never the caller's error.
import type { Request, Response } from "express";
import { type ApiContext, callerOf } from "./context.ts";
import { userOf } from "./auth.ts";
import type { RouteSpec } from "./route.ts";

// Airflow's sensitive field names (secrets_masker's DEFAULT_SENSITIVE_FIELDS: password, passwd,
// passphrase, secret, token, access_token, api_key, apikey, private_key, authorization,
// keyfile_dict, service_account, proxy, proxies), matched as substrings, plus credential.
const SECRET_KEY = /pass|secret|token|credential|private|api_?key|authorization|keyfile_dict|service_account|prox(y|ies)/i;
const EXTRA_MAX = 2000;

/** Whether a field of this name holds a secret (Airflow hides its value in logs and answers). */
export function isSensitiveName(name: string): boolean {
  return SECRET_KEY.test(name);
}

/** A connection's `extra` (a JSON object's text), its secret-looking keys masked at any depth, as
 * Airflow's event log keeps it; text that is not JSON is not kept at all. */
function maskedExtra(text: string): unknown {
  try {
    return maskSecrets(JSON.parse(text));
  } catch {
    return "Encountered non-JSON in `extra` field";
  }
}

/** A copy with secret-looking fields masked ("***"), a variable's value when its key looks secret,
 * and a connection's `extra` text read as JSON and masked inside. */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => maskSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value as Record<string, unknown>);
  const secretVariable = entries.some(([k, v]) => k === "key" && typeof v === "string" && SECRET_KEY.test(v));
  for (const [k, v] of entries) {
    if (SECRET_KEY.test(k) || (secretVariable && k === "value")) out[k] = "***";
    else if (k === "extra" && typeof v === "string") out[k] = maskedExtra(v);
    else out[k] = maskSecrets(v, depth + 1);
  }
  return out;
}

/** The body as the audit keeps it: secret-looking fields masked (maskSecrets); with the task group
 * a path names, which has no column of its own (as Airflow keeps path parameters in extra). */
export function auditExtra(body: unknown, query: unknown, groupId?: string): string | null {
  const parts: Record<string, unknown> = groupId === undefined ? {} : { group_id: groupId };
  if (body !== undefined && !(typeof body === "object" && body !== null && Object.keys(body).length === 0)) parts.body = maskSecrets(body);
  if (query !== null && typeof query === "object" && Object.keys(query).length > 0) parts.query = maskSecrets(query);
  if (Object.keys(parts).length === 0) return null;
  const text = JSON.stringify(parts);
  return text.length > EXTRA_MAX ? `${text.slice(0, EXTRA_MAX)}…` : text;
}

const DRY_BY_DEFAULT = new Set(["post_clear_task_instances", "clear_dag_run", "clear_dag_runs"]);

function isDryRun(spec: RouteSpec, body: unknown): boolean {
  if (spec.path.endsWith("/dry_run")) return true;
  // Airflow's clear bodies default dry_run to true
  return typeof body === "object" && body !== null && (body as { dry_run?: unknown }).dry_run !== false && DRY_BY_DEFAULT.has(spec.operationId);
}

export function ownerOf(req: Request, res: Response): string {
  return userOf(res.locals) ?? `api_token (${callerOf(req)})`;
}

export function auditChange({ runner, logger }: ApiContext): (spec: RouteSpec, req: Request, res: Response) => Promise<void> {
  return async (spec, req, res) => {
    const body: unknown = req.body;
    if (isDryRun(spec, body)) return;
    const params = req.params as Record<string, string | undefined>;
    const fromBody = (key: string): string | null => {
      const v = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[key] : undefined;
      return typeof v === "string" ? v : null;
    };
    const local = (key: string): string | null => (typeof res.locals[key] === "string" ? res.locals[key] : null);
    const runId = params.dag_run_id ?? local("auditRunId") ?? fromBody("dag_run_id");
    // a backfill's calls name their DAG in the body (create) or not at all (pause, cancel: the route says)
    const dagId = params.dag_id ?? local("auditDagId") ?? fromBody("dag_id");
    try {
      await runner.recordEvent({
        event: spec.operationId,
        owner: ownerOf(req, res),
        dagId: dagId === "~" ? null : dagId,
        taskId: params.task_id ?? null,
        runId: runId === "~" ? null : runId,
        extra: auditExtra(body, req.query, params.group_id),
      });
    } catch (err) {
      logger.error({ err, event: spec.operationId, path: req.path }, "the event log did not take a change; the change itself was made");
    }
  };
}
