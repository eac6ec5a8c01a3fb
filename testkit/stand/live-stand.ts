// For tests against the running stand's services (make stand-up), which clean up what they create:
// names no one else uses, kafkajs clients, a progress-printing wait and a retry.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Kafka, logLevel } from "kafkajs";
import { loadStandConfig } from "../../src/config/index.ts";
import { errorMessage } from "../../src/errors.ts";

/** A name no other test or the world uses: `<prefix>_<8 hex>` (valid for ClickHouse and Kafka). */
export function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

export function kafkaClient(clientId: string): Kafka {
  const config = loadStandConfig();
  return new Kafka({
    clientId,
    brokers: [`${config.bind_host}:${config.kafka.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  });
}

/**
 * Polls `check` until it returns true, printing progress every 5 s; on timeout throws with the last
 * state `check` reported through `describe`.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  describe: () => string,
  timeoutMs: number,
): Promise<void> {
  const started = Date.now();
  let lastReport = started;
  while (Date.now() - started < timeoutMs) {
    if (await check()) return;
    if (Date.now() - lastReport >= 5000) {
      lastReport = Date.now();
      console.log(`  waiting for ${what} (${((Date.now() - started) / 1000).toFixed(0)} s): ${describe()}`);
    }
    await sleep(500);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}: ${describe()}`);
}

/** Retries `work` a few times: Kafka group deletion fails while a consumer is still leaving. */
export async function retry<T>(what: string, work: () => Promise<T>, attempts = 20, delayMs = 500): Promise<T> {
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await work();
    } catch (err) {
      lastError = err;
      await sleep(delayMs);
    }
  }
  throw new Error(`${what} failed after ${attempts} attempts: ${errorMessage(lastError)}`, { cause: lastError });
}

