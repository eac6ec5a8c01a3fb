// Testing a connection: POST /api/v2/connections/test (answers the outcome) and Airflow's newer
// enqueue-test pair. Off unless runner.api.test_connection is enabled (Airflow's core.test_connection,
// Disabled by default: a test reaches whatever host the caller names from the runner's network).
// An enqueued test is not handed to a worker here: it runs at once, in the process that takes the
// call, and its outcome is kept under the token the answer gives, for GET enqueue-test to read.
import { ConnectionNotFoundError, type ConnectionFields, type ConnectionRecord } from "../../runner/index.ts";
import { errorMessage } from "../../errors.ts";
import type { ApiContext, ConnectionTester } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import {
  applyBody,
  asyncConnectionTestResponse,
  connectionBody,
  connectionTestQueuedResponse,
  connectionTestRequestBody,
  connectionTestResponse,
  fieldsOfBody,
  serializeTest,
  type ConnectionBody,
} from "./connection-bodies.ts";
import { connectionLookup, readOnlyConnection } from "./connection-lookup.ts";

/** The longest a test may take, whatever the tester's own timeouts. */
const TEST_DEADLINE_MS = 15_000;
export const TEST_TOKEN_HEADER = "Airflow-Connection-Test-Token";

function testingDisabled(): ApiProblem {
  return new ApiProblem(
    403,
    "Testing connections is disabled in the runner's configuration (runner.api.test_connection in the stand config). Contact your deployment admin to enable it.",
  );
}

/** The tester's outcome, or a failed one if it throws or outlives the deadline (or the server stops). */
async function runTester(tester: ConnectionTester, connection: ConnectionFields, shutdown: AbortSignal): Promise<{ status: boolean; message: string }> {
  const signal = AbortSignal.any([AbortSignal.timeout(TEST_DEADLINE_MS), shutdown]);
  let stop: (() => void) | undefined;
  const deadline = new Promise<{ status: boolean; message: string }>((resolve) => {
    stop = () => resolve({ status: false, message: shutdown.aborted ? "the runner is stopping: test not finished" : `no answer within ${TEST_DEADLINE_MS / 1000} s` });
    signal.addEventListener("abort", stop, { once: true });
  });
  try {
    return await Promise.race([tester(connection, signal), deadline]);
  } catch (err) {
    return { status: false, message: errorMessage(err) };
  } finally {
    if (stop) signal.removeEventListener("abort", stop);
  }
}

export function connectionTestRoutes(context: ApiContext): RouteSpec[] {
  const { runner, connections, shutdownSignal } = context;
  const lookup = connectionLookup(context);

  /** As Airflow: a test of an existing connection's id tests it with the body's fields over it ("***" keeps its secrets). */
  async function connectionToTest(body: ConnectionBody): Promise<{ existing?: ConnectionRecord; tested: ConnectionFields }> {
    try {
      const existing = await lookup.find(body.connection_id);
      return { existing, tested: applyBody(existing, body, undefined) };
    } catch (err) {
      if (err instanceof ConnectionNotFoundError) return { tested: fieldsOfBody(body) };
      throw err;
    }
  }

  return [
    defineRoute({
      method: "post",
      path: "/api/v2/connections/test",
      operationId: "test_connection",
      summary: "Test a connection",
      description:
        "403 unless runner.api.test_connection is enabled (Airflow's core.test_connection, Disabled by default). Reaches " +
        "the system for real: postgres connects and runs select 1, clickhouse answers GET /ping (and SELECT 1 as the " +
        "login), kafka describes its cluster, any other type a TCP connect; each within seconds. A body whose " +
        "connection_id exists is tested over that connection (\"***\" keeps its password). Nothing is stored.",
      tag: "Connection",
      auth: true,
      // a test changes nothing: Airflow does not log it either
      audit: false,
      body: connectionBody,
      bodySchemaName: "ConnectionBody",
      responses: {
        200: { description: "Whether the system answered, and what it said", schema: connectionTestResponse, schemaName: "ConnectionTestResponse" },
        403: { description: "Testing connections is disabled" },
      },
      async handle({ body, res }) {
        const tester = connections.tester;
        if (!tester) throw testingDisabled();
        const { tested } = await connectionToTest(body);
        res.json(await runTester(tester, tested, shutdownSignal));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/connections/enqueue-test",
      operationId: "enqueue_connection_test",
      summary: "Test a connection and keep the outcome under a token",
      description:
        "As test_connection (403 when disabled), but the answer is a token: GET enqueue-test with the " +
        `${TEST_TOKEN_HEADER} header reads the outcome for a day. The test is not queued for a worker: it runs at ` +
        "once, before this answers, so the state is already success or failed. commit_on_success saves the tested " +
        "connection when it succeeds (the stand's own are read-only: 409). executor must be null; queue has no effect. " +
        "409 while another test of the same connection_id runs.",
      tag: "Connection",
      auth: true,
      body: connectionTestRequestBody,
      bodySchemaName: "ConnectionTestRequestBody",
      responses: {
        202: { description: "The test ran; its token and state", schema: connectionTestQueuedResponse, schemaName: "ConnectionTestQueuedResponse" },
        403: { description: "Testing connections is disabled" },
        409: { description: "A test of this connection runs, or commit_on_success of a read-only connection" },
      },
      async handle({ body, res }) {
        const tester = connections.tester;
        if (!tester) throw testingDisabled();
        const { existing, tested } = await connectionToTest(body);
        if (body.commit_on_success && existing?.readOnly === true) throw readOnlyConnection(existing.connectionId);
        const started = await runner.startConnectionTest(body.connection_id);
        let outcome = await runTester(tester, tested, shutdownSignal);
        if (outcome.status && body.commit_on_success) {
          try {
            await (existing ? runner.updateConnection(tested) : runner.createConnection(tested));
            outcome = { ...outcome, message: `${outcome.message}; the connection is saved` };
          } catch (err) {
            outcome = { status: false, message: `${outcome.message}; saving the connection failed: ${errorMessage(err)}` };
          }
        }
        const finished = await runner.finishConnectionTest(started.token, outcome);
        res.status(202).json({ token: finished.token, connection_id: finished.connectionId, state: finished.state });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/connections/enqueue-test",
      operationId: "get_connection_test",
      summary: "The outcome of a connection test, by its token",
      description: `The token is the ${TEST_TOKEN_HEADER} header, as enqueue-test answered it; 404 for an unknown or expired one.`,
      tag: "Connection",
      auth: false,
      responses: {
        200: { description: "The test's state and message", schema: asyncConnectionTestResponse, schemaName: "AsyncConnectionTestResponse" },
        404: { description: "No test has this token" },
        422: { description: `No ${TEST_TOKEN_HEADER} header` },
      },
      async handle({ req, res }) {
        const token = req.get(TEST_TOKEN_HEADER);
        if (token === undefined || token === "" || token.length > 200) {
          throw new ApiProblem(422, `the ${TEST_TOKEN_HEADER} header is required: the token enqueue-test answered`, {
            field: TEST_TOKEN_HEADER,
            location: "header",
          });
        }
        res.json(serializeTest(await runner.getConnectionTest(token)));
      },
    }),
  ];
}
