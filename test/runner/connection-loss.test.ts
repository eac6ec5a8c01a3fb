// Which errors mean "the connection went away" (and so a fenced write may be sent again), by type
// and code; and the retry around such a write. No service needed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { isConnectionLoss, withConnectionPatience } from "../../src/runner/db.ts";

function serverError(code: string): pg.DatabaseError {
  const err = new pg.DatabaseError("server said no", 42, "error");
  err.code = code;
  return err;
}

describe("connection loss", () => {
  it("is told by type and SQLSTATE, never by message", () => {
    assert.equal(isConnectionLoss(serverError("57P01")), true, "admin shutdown (a restart)");
    assert.equal(isConnectionLoss(serverError("08006")), true, "connection failure");
    assert.equal(isConnectionLoss(serverError("23505")), false, "a unique violation is the statement's own failure");
    assert.equal(isConnectionLoss(serverError("40001")), false);
    assert.equal(isConnectionLoss(new Error("Connection terminated unexpectedly")), true, "pg's own error for a socket that ended (no code)");
    assert.equal(isConnectionLoss(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })), true);
    assert.equal(isConnectionLoss(new TypeError("bad parameter")), false, "a programming error is not retried");
    assert.equal(isConnectionLoss("a string"), false);
  });

  it("a write that lost its connection is sent again until it lands; any other failure is thrown at once", async () => {
    let calls = 0;
    const retries: number[] = [];
    const value = await withConnectionPatience(
      () => (++calls < 3 ? Promise.reject(new Error("Connection terminated unexpectedly")) : Promise.resolve("landed")),
      10_000,
      (_err, attempts) => retries.push(attempts),
    );
    assert.equal(value, "landed");
    assert.deepEqual(retries, [1, 2]);

    calls = 0;
    await assert.rejects(
      withConnectionPatience(() => (++calls, Promise.reject(serverError("23505"))), 10_000, () => undefined),
      (err: unknown) => err instanceof pg.DatabaseError && err.code === "23505",
    );
    assert.equal(calls, 1, "not retried");
  });

  it("gives up with the last error once its patience is spent", async () => {
    const started = Date.now();
    await assert.rejects(withConnectionPatience(() => Promise.reject(serverError("57P01")), 300, () => undefined), (err: unknown) => err instanceof pg.DatabaseError && err.code === "57P01");
    assert.ok(Date.now() - started >= 300);
  });
});
