// GET /api/v2/world/summary: the World page's view model as JSON, declared with the API's route
// helpers so it is validated like the API's own routes and listed in /api/v2/openapi.json.
// src/server/app.ts hands these declarations to createApp; the page (/ui/world) is built from the
// same buildWorldView, so the page and this answer cannot disagree.
import { z } from "zod";
import { ApiProblem, defineRoute, type RouteSpec } from "../api/index.ts";
import type { RunnerService } from "../runner/index.ts";
import { buildWorldView, worldQuery, type WorldSources, type WorldView } from "./pages/world-view.ts";

const partOf = <T extends z.ZodType>(data: T) =>
  z.union([z.object({ ok: z.literal(true), data }), z.object({ ok: z.literal(false), error: z.string().describe("why the part could not be read") })]);

const dailySeries = z.object({
  dates: z.array(z.string()).describe("the days shown, oldest first (YYYY-MM-DD)"),
  series: z.array(z.object({ name: z.string(), source: z.string(), counts: z.array(z.number().int()).describe("one count per date") })),
});

const dqStatus = z.enum(["pass", "fail"]);
const dqResults = z.object({
  latest: z.array(
    z.object({
      check: z.string(),
      status: dqStatus,
      run_id: z.string(),
      days: z.number().int(),
      failed_rows: z.number().int(),
      failed_days: z.array(
        z.object({
          date: z.string(),
          reference_rows: z.number().int(),
          actual_rows: z.number().int(),
          failed_rows: z.number().int(),
          offending_keys: z.array(z.string()),
        }),
      ),
    }),
  ),
  runs: z.array(
    z.object({
      run_id: z.string(),
      started_at: z.string(),
      checks: z.record(z.string(), z.object({ status: dqStatus, failed_rows: z.number().int() })),
    }),
  ),
});

const runLink = z.object({ dagId: z.string(), runId: z.string(), href: z.string() });

export const worldSnapshotsResponse = z.object({
  snapshots: z.array(
    z.object({
      name: z.string(),
      state: z.enum(["complete", "partial", "unreadable"]).describe("partial: a save that did not finish; unreadable: its manifest is not one"),
      position: z.number().int().nullable().describe("world_position when it was saved"),
      takenAt: z.string().nullable(),
      ownBytes: z.number().int().describe("disk only this snapshot holds"),
      sharedBytes: z.number().int().describe("bytes it shares with the live data or another snapshot through hard links"),
      schema: z.string().nullable().describe("a digest of the DDL build it holds"),
      schemaIsToday: z.boolean().nullable().describe("its DDL build is sql/ddl/ today: false means a restore refuses it"),
      problem: z.string().nullable(),
    }),
  ),
  restores: z.array(
    z.object({ snapshot: z.string(), fromPosition: z.string().nullable(), toPosition: z.number().int(), runId: z.string(), restoredAt: z.string().nullable() }),
  ),
});

export const worldSummaryResponse = z.object({
  generatedAt: z.string(),
  days: z.number().int(),
  active: z.boolean().describe("a world DAG has a queued or running run"),
  activeRuns: z.array(runLink.extend({ state: z.string() })),
  position: partOf(
    z.object({
      value: z.string().nullable(),
      history: z.array(
        z.object({ changedAt: z.string(), oldValue: z.string().nullable(), newValue: z.string().nullable(), changedBy: z.string(), run: runLink.nullable() }),
      ),
    }),
  ),
  layers: partOf(dailySeries).describe("rows per day in STG, ODS, DDS and DM"),
  errors: partOf(dailySeries).describe("refused hits per day and reason (dm.daily_dq_errors_v)"),
  classes: partOf(dailySeries).describe("dm.purchase_vs_orders_v orders per order day and mismatch class"),
  dq: partOf(dqResults).describe("the published result of each dq_check check, and the checks of the last dq_check runs"),
  kafka: partOf(
    z.array(
      z.object({
        topic: z.string(),
        partition: z.number().int(),
        end_offset: z.number().int(),
        groups: z.array(z.object({ group: z.string(), committed: z.number().int().nullable(), lag: z.number().int().nullable() })),
      }),
    ),
  ),
  schema: partOf(z.object({ status: z.string(), drift: z.boolean(), note: z.string().nullable(), summary: z.record(z.string(), z.number()) })).nullable(),
  services: partOf(
    z.array(
      z.object({
        name: z.string(),
        healthy: z.boolean(),
        detail: z.string().describe("what make check-services says: pid, state, why it is not healthy (degraded, crash-looping)"),
        state: z.string().nullable().describe("the keeper's state: up, starting, not-serving, restarting, waiting, crash-looping, stopped"),
        restarts: z.number().int().nullable().describe("starts by the keeper"),
        lastExit: z.string().nullable(),
      }),
    ),
  )
    .nullable()
    .describe("the stand's services with the keeper's records (null: not the local-process stand)"),
  snapshots: partOf(worldSnapshotsResponse).nullable().describe("the world snapshots and the last restores (null: no snapshot store here)"),
  metrics: partOf(
    z.object({
      prometheusUrl: z.string().describe("where a browser on this machine reaches the stand's Prometheus"),
      minutes: z.array(z.string()).describe("HH:MM (UTC) of each of the last 60 minutes, oldest first"),
      lag: z.array(z.number().nullable()).describe("the consumer lag of hits at the end of each minute (null: no sample)"),
      placed: z.array(z.number().nullable()).describe("rows the loader placed during each minute (null: no sample)"),
    }),
  )
    .nullable()
    .describe("the last hour of lag and rows placed, from the stand's Prometheus (null: none wired in)"),
});

/** Compiles only while the view model fits the documented schema. */
const fitsSchema: (view: WorldView) => z.input<typeof worldSummaryResponse> = (view) => view;

export function worldApiRoutes(runner: RunnerService, sources: WorldSources | undefined): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/world/summary",
      operationId: "get_world_summary",
      summary: "The world at a glance: position, rows per day and layer, refused hits, DQ results, purchase_vs_orders classes, Kafka lag, schema",
      description:
        "What the web view's World page (/ui/world) shows. Each part is read on its own: a ClickHouse or Kafka that does not answer makes that part {ok: false, error}, never the whole answer an error.",
      tag: "World",
      auth: false,
      query: worldQuery.strict(),
      responses: {
        200: { description: "World summary", schema: worldSummaryResponse, schemaName: "WorldSummaryResponse" },
        422: { description: "A bad query parameter (days: 1 to 366)" },
      },
      async handle({ query, res }) {
        res.json(fitsSchema(await buildWorldView(runner, sources, query.days)));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/world/snapshots",
      operationId: "get_world_snapshots",
      summary: "The world snapshots (name, position, taken at, disk, schema) and the last restores",
      description:
        "Read-only. Saving and restoring are DAG runs: POST /api/v2/dags/world_snapshot/dagRuns or /api/v2/dags/world_restore/dagRuns with conf {\"name\": …}. 503 when this runner has no snapshot store (not the local-process stand).",
      tag: "World",
      auth: false,
      responses: {
        200: { description: "Snapshots and restores", schema: worldSnapshotsResponse, schemaName: "WorldSnapshotsResponse" },
        503: { description: "No snapshot store wired into this runner" },
      },
      async handle({ res }) {
        const read = sources?.snapshots;
        if (!read) throw new ApiProblem(503, "this runner has no snapshot store (world snapshots live on the local-process stand)");
        const answer: z.input<typeof worldSnapshotsResponse> = await read();
        res.json(answer);
      },
    }),
  ];
}
