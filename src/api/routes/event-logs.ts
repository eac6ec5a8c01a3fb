// GET /api/v2/eventLogs and /api/v2/eventLogs/{event_log_id}: the audit trail (src/api/audit.ts
// writes it), with Airflow's filters and sort keys.
import { z } from "zod";
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { eventLogCollection, eventLogResponse } from "../responses.ts";
import { pageQuery } from "../schemas.ts";
import { EVENT_SORT_FIELDS, sortKeys, type EventRecord } from "../../runner/index.ts";

const text = z.string().max(1000).optional();
/** Repeated (?e=a&e=b) or comma separated (?e=a,b), as Airflow takes them. */
const list = z
  .preprocess((v: unknown): unknown => {
    if (Array.isArray(v)) return (v as unknown[]).flatMap((x): unknown[] => (typeof x === "string" ? x.split(",") : [x]));
    return typeof v === "string" ? v.split(",") : v;
  }, z.array(z.string().max(250)).max(100))
  .optional();
const whole = z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(-1).max(2_147_483_647).optional();
const date = z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time with an offset" }).transform((t) => new Date(t)).optional();
const orderValue = z.enum([...EVENT_SORT_FIELDS, ...EVENT_SORT_FIELDS.map((f) => `-${f}` as const)]);

const eventLogsQuery = pageQuery
  .extend({
    order_by: z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(orderValue)).default(["id"]),
    dag_id: text, task_id: text, run_id: text, map_index: whole, try_number: whole, owner: text, event: text,
    excluded_events: list, included_events: list,
    before: date, after: date,
    dag_id_pattern: text, task_id_pattern: text, run_id_pattern: text, owner_pattern: text, event_pattern: text,
    dag_id_prefix_pattern: text, task_id_prefix_pattern: text, run_id_prefix_pattern: text, owner_prefix_pattern: text, event_prefix_pattern: text,
  })
  .strict();

function serializeEvent(e: EventRecord): z.infer<typeof eventLogResponse> {
  return {
    event_log_id: e.id,
    when: e.when.toISOString(),
    dag_id: e.dagId,
    task_id: e.taskId,
    run_id: e.runId,
    map_index: e.taskId === null ? null : -1,
    try_number: e.tryNumber,
    event: e.event,
    logical_date: e.logicalDate === null ? null : e.logicalDate.toISOString(),
    owner: e.owner,
    extra: e.extra,
    dag_display_name: e.dagId,
    task_display_name: e.taskId,
  };
}

export function eventLogRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/eventLogs",
      operationId: "get_event_logs",
      summary: "The audit trail: every change made through the API or the web view, and every login",
      description:
        "Filters: dag_id, task_id, run_id, try_number, owner, event, included_events/excluded_events (repeat or comma " +
        "separate), before/after (when), _pattern (ILIKE, | for or) and _prefix_pattern on the ids, owner and event. " +
        "order_by takes several keys; oldest first by default. map_index -1 is every task's (a filter on another matches none).",
      tag: "Event Log",
      auth: false,
      query: eventLogsQuery,
      responses: { 200: { description: "One page of events", schema: eventLogCollection, schemaName: "EventLogCollectionResponse" } },
      async handle({ query: q, res }) {
        if (q.map_index !== undefined && q.map_index !== -1) {
          res.json({ event_logs: [], total_entries: 0 });
          return;
        }
        const page = await runner.listEvents({
          limit: q.limit,
          offset: q.offset,
          dagId: q.dag_id,
          taskId: q.task_id,
          runId: q.run_id,
          tryNumber: q.try_number,
          owner: q.owner,
          event: q.event,
          includedEvents: q.included_events,
          excludedEvents: q.excluded_events,
          before: q.before,
          after: q.after,
          patterns: { dagId: q.dag_id_pattern, taskId: q.task_id_pattern, runId: q.run_id_pattern, owner: q.owner_pattern, event: q.event_pattern },
          prefixes: { dagId: q.dag_id_prefix_pattern, taskId: q.task_id_prefix_pattern, runId: q.run_id_prefix_pattern, owner: q.owner_prefix_pattern, event: q.event_prefix_pattern },
          orderBy: sortKeys(q.order_by, EVENT_SORT_FIELDS),
        });
        res.json({ event_logs: page.items.map(serializeEvent), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/eventLogs/{event_log_id}",
      operationId: "get_event_log",
      summary: "One event of the audit trail",
      tag: "Event Log",
      auth: false,
      params: z.object({ event_log_id: z.coerce.number({ error: "must be a number" }).int().min(1).max(9_007_199_254_740_991) }).strict(),
      responses: { 200: { description: "The event", schema: eventLogResponse, schemaName: "EventLogResponse" }, 404: { description: "No such event" } },
      async handle({ params, res }) {
        res.json(serializeEvent(await runner.getEvent(params.event_log_id)));
      },
    }),
  ];
}
