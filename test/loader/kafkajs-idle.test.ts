// kafkajs 2.2.4's request queue, as patches/kafkajs+2.2.4.patch leaves it: an idle queue arms no
// timer (the released code re-arms a negative-delay timer after every check, so an idle loader
// woke its event loop about 1,700 times a second: tulios/kafkajs#1556), while a queue with a
// request waiting, or under a broker's throttle, still schedules the check that sends it.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  canSendSocketRequestImmediately(): boolean;
  checkPendingRequests(): void;
  destroy(): void;
}
type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueueLike;

const require = createRequire(import.meta.url);
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as RequestQueueClass;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function newQueue(): RequestQueueLike {
  return new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: true,
    clientId: "kafkajs-idle-test",
    broker: "127.0.0.1:1",
    logger: quiet,
  });
}

/** How many times the queue checks itself within `ms` after one check. */
async function checksWithin(queue: RequestQueueLike, ms: number): Promise<number> {
  let checks = 0;
  const original = queue.checkPendingRequests.bind(queue);
  queue.checkPendingRequests = () => {
    checks += 1;
    original();
  };
  queue.checkPendingRequests();
  await sleep(ms);
  return checks;
}

void test("an idle queue checks once and arms no timer: the event loop sleeps", async () => {
  const queue = newQueue();
  try {
    const checks = await checksWithin(queue, 150);
    assert.equal(checks, 1, `an idle queue checked itself ${checks} times in 150 ms`);
    assert.equal(queue.throttleCheckTimeoutId, null, "no timer is armed when nothing is pending");
  } finally {
    queue.destroy();
  }
});

void test("a request waiting behind a full in-flight window still gets its check scheduled", () => {
  const queue = newQueue();
  queue.canSendSocketRequestImmediately = () => false;
  queue.pending.push({ correlationId: 1 });
  queue.checkPendingRequests();
  assert.notEqual(queue.throttleCheckTimeoutId, null, "a pending request keeps a check armed");
  queue.pending.length = 0;
  queue.destroy();
});

void test("a broker's throttle in force still schedules the check for when it ends, even with nothing pending", () => {
  const queue = newQueue();
  queue.throttledUntil = Date.now() + 5_000;
  queue.checkPendingRequests();
  assert.notEqual(queue.throttleCheckTimeoutId, null, "a throttle keeps its end-of-throttle check");
  queue.destroy();
});
