// waitForRun without polling: one LISTEN connection per runner receives the pg_notify that the
// run-completion transaction sends, and wakes whoever waits for that run. A waiter registers
// before it reads the run, so a completion between the read and the wait is never missed.
import type pg from "pg";
import type { Logger } from "pino";
import { createClient } from "./db.ts";
import { TERMINAL_RUN_STATES, type DagRunRecord } from "./types.ts";

const CHANNEL = "runner_run_done";

export class RunWaiters {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
  ) {}

  async connect(): Promise<void> {
    if (this.client || this.closed) return;
    this.connecting ??= this.openListener().finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
  }

  /** Resolves with the run once it is terminal, or as it is when the timeout or signal ends the wait. */
  async wait(
    dagId: string,
    runId: string,
    options: { timeoutMs: number; signal?: AbortSignal },
    readRun: () => Promise<DagRunRecord>,
  ): Promise<DagRunRecord> {
    await this.connect();
    const key = `${dagId}\u0000${runId}`;
    let wake: () => void = () => undefined;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    const waker = () => wake();
    const wakers = this.waiting.get(key) ?? new Set();
    wakers.add(waker);
    this.waiting.set(key, wakers);
    let done = false;
    const end = () => {
      done = true;
      wake();
    };
    const timer = setTimeout(end, Math.max(0, options.timeoutMs));
    options.signal?.addEventListener("abort", end, { once: true });
    try {
      let current = await readRun();
      while (!TERMINAL_RUN_STATES.has(current.state) && !done && !options.signal?.aborted && !this.closed) {
        await woken;
        woken = new Promise<void>((resolve) => (wake = resolve));
        current = await readRun();
      }
      return current;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", end);
      wakers.delete(waker);
      if (wakers.size === 0) this.waiting.delete(key);
    }
  }

  /** Ends every wait (each returns the run as it is) and closes the LISTEN connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async openListener(): Promise<void> {
    const client = createClient(this.connectionString);
    client.on("notification", (msg) => this.onNotification(msg));
    client.on("error", (err) => this.onConnectionLost(client, err));
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    this.client = client;
    // anything that ended while we were not listening: let every waiter look again
    this.wakeAll();
  }

  private onNotification(msg: pg.Notification): void {
    if (msg.channel !== CHANNEL || !msg.payload) return;
    try {
      const { dag_id, run_id } = JSON.parse(msg.payload) as { dag_id: string; run_id: string };
      for (const wake of this.waiting.get(`${dag_id}\u0000${run_id}`) ?? []) wake();
    } catch (err) {
      this.logger.warn({ err, payload: msg.payload }, "unreadable run notification");
    }
  }

  private onConnectionLost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn({ err }, "run notification connection lost; reconnecting");
    const retry = () => {
      this.connect().catch((e: unknown) => {
        this.logger.warn({ err: e }, "reconnecting the run notification listener failed; retrying in 1 s");
        if (!this.closed) setTimeout(retry, 1000).unref();
      });
    };
    retry();
  }

  private wakeAll(): void {
    for (const wakers of this.waiting.values()) for (const wake of wakers) wake();
  }
}
