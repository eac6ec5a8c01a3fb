// The context a task function receives: identity, typed conf, abort signal, a per-try log kept
// in Postgres, and variables whose changes are recorded with this run (and refused once the try
// has been taken over).
import type { Logger } from "pino";
import type { TaskContext, TaskVariables, TaskXCom } from "./dag.ts";
import { type Queryable, inTransaction } from "./db.ts";
import type { Engine } from "./engine.ts";
import { PG_ERROR, TryNotHolderError, VariableNotFoundError } from "./errors.ts";
import { errorCode } from "../errors.ts";
import { addLine, type TrackedTry } from "./inflight.ts";
import type { ClaimedTry } from "./task-tries.ts";
import { deleteVariable, getVariable, setVariable } from "./variables.ts";
import { pullXCom, pushXCom, RETURN_VALUE_KEY, xcomJson } from "./xcom.ts";

export function buildTaskContext(engine: Engine, tracked: TrackedTry): TaskContext<unknown> {
  const claim = tracked.claim;
  // created on first use: most tasks never write a warning, and a child logger is not free
  let childLogger: Logger | undefined;
  const logger = () =>
    (childLogger ??= engine.logger.child({ dagId: claim.dagId, runId: claim.runId, taskId: claim.taskId, try: claim.tryNumber }));
  return {
    dagId: claim.dagId,
    runId: claim.runId,
    taskId: claim.taskId,
    tryNumber: claim.tryNumber,
    maxTries: claim.maxTries,
    logicalDate: claim.logicalDate,
    conf: claim.conf,
    signal: tracked.controller.signal,
    log: {
      info: (message) => {
        addLine(tracked, "info", message);
        if (engine.logger.isLevelEnabled("debug")) logger().debug(message);
      },
      warn: (message) => {
        addLine(tracked, "warn", message);
        logger().warn(message);
      },
      error: (message) => {
        addLine(tracked, "error", message);
        logger().error(message);
      },
    },
    variables: taskVariables(engine, claim),
    xcom: taskXCom(engine, claim),
  };
}

function taskXCom(engine: Engine, claim: ClaimedTry): TaskXCom {
  return {
    async push(key, value) {
      if (typeof key !== "string" || key.length === 0 || key.length > 512) throw new RangeError(`xcom.push: the key must be 1-512 characters, got ${JSON.stringify(key)}`);
      const json = xcomJson(value, `xcom.push('${key}') in ${claim.dagId}/${claim.runId}/${claim.taskId}`);
      await asHolder(engine, claim, (db) => pushXCom(db, claim.tiId, claim.tryNumber, key, json));
    },
    pull(taskId, key = RETURN_VALUE_KEY) {
      return pullXCom(engine.pool, claim.tiId, taskId, key);
    },
  };
}

function taskVariables(engine: Engine, claim: ClaimedTry): TaskVariables {
  const author = { changedBy: `run:${claim.dagId}/${claim.runId}/${claim.taskId}`, dagId: claim.dagId, runId: claim.runId };
  const holder = (write: (db: Queryable) => Promise<unknown>) => asHolder(engine, claim, write);
  return {
    async get(key) {
      return (await getVariable(engine.pool, key))?.value ?? null;
    },
    async set(key, value) {
      await holder((db) => setVariable(db, key, value, author));
    },
    async delete(key) {
      await holder(async (db) => {
        try {
          await deleteVariable(db, key, author);
        } catch (err) {
          if (!(err instanceof VariableNotFoundError)) throw err;
        }
      });
    },
  };
}

/** Every write of a try first proves (under a share lock) that the try still holds its task. */
async function asHolder(engine: Engine, claim: ClaimedTry, write: (db: Queryable) => Promise<unknown>): Promise<void> {
  try {
    await inTransaction(engine.pool, async (client) => {
      await client.query("select runner.assert_try_holds($1, $2)", [claim.tiId, claim.token]);
      await write(client);
    });
  } catch (err) {
    if (errorCode(err) === PG_ERROR.TRY_NOT_HOLDER) {
      throw new TryNotHolderError(claim.dagId, claim.runId, claim.taskId, claim.tryNumber);
    }
    throw err;
  }
}
