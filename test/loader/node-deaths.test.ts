// One suspect batch in flight to a node for the whole loader process (node-deaths.ts): the service's
// hits and orders cores both write to ch1 and share one SuspectTurns. Overlap is shown by
// construction, never by timing: the first suspect salvage blocks on a promise the test holds, and
// work that was queued after the second one (on another node) runs to its end first. Were the second
// not held by the turn, it would have started before that work (the same path, started earlier; the
// fakes answer without I/O or timers), as the control test with one turn object per core shows.
// A node wrongly waiting for another leaves a wait that never settles: the runner fails the test
// (cancelled once nothing is left to run, or at HANG_GUARD's timeout), never passes it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import type { DeadLetter } from "../../src/loader/dead-letters.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { SuspectTurns } from "../../src/loader/node-deaths.ts";
import type { LoaderMessage, LoaderTarget } from "../../src/loader/types.ts";

const HANG_GUARD = { timeout: 10_000 };

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function socketError(code: string, text: string): Error {
  return Object.assign(new Error(text), { code });
}

/** A server that dies on an INSERT holding a killer row and, supervised, is back right after the
 * ping that found it gone (so each death is counted once and every later try reaches it). */
class FakeServer {
  private dead = false;
  readonly stored = new Map<string, number>();
  /** Resolves once `expected` distinct rows are stored. */
  readonly filled = deferred();

  constructor(
    readonly name: string,
    private readonly killers: ReadonlySet<string>,
    private readonly expected: number,
  ) {}

  insert(rows: readonly string[]): Promise<void> {
    if (this.dead) return Promise.reject(socketError("ECONNREFUSED", `connect ECONNREFUSED (${this.name})`));
    if (rows.some((row) => this.killers.has(row))) {
      this.dead = true;
      return Promise.reject(socketError("ECONNRESET", "socket hang up"));
    }
    for (const row of rows) this.stored.set(row, (this.stored.get(row) ?? 0) + 1);
    if (this.stored.size >= this.expected) this.filled.resolve();
    return Promise.resolve();
  }

  ping(): Promise<boolean> {
    const answers = !this.dead;
    this.dead = false;
    return Promise.resolve(answers);
  }
}

/** What a core did to which server, once `tracing` is on: "orders insert ch1 2", "hits ping ch1". */
interface Trace {
  tracing: boolean;
  events: string[];
}

/** Holds the first INSERT of `core` once armed: `reached` says it is held, `release` lets it go. */
interface InsertHold {
  core: string;
  armed: boolean;
  reached: Deferred<void>;
  release: Deferred<void>;
}

/** Whether a traced event is `core`'s, sent to `node`. */
function touches(event: string, core: string, node: string): boolean {
  const [who, , where] = event.split(" ");
  return who === core && where === node;
}

function rowId(line: Buffer): string {
  const { t, p, o } = JSON.parse(line.toString("utf8")) as { t: string; p: number; o: number };
  return `${t}/${p}@${o}`;
}

function fakeCore(label: string, targets: readonly LoaderTarget[], servers: ReadonlyMap<string, FakeServer>, turns: SuspectTurns | undefined, trace: Trace, hold: InsertHold, letters: DeadLetter[]): LoaderCore {
  const server = (target: LoaderTarget): FakeServer => {
    const found = servers.get(target.node);
    if (found === undefined) throw new Error(`no fake server ${target.node}`);
    return found;
  };
  const note = (event: string) => {
    if (trace.tracing) trace.events.push(`${label} ${event}`);
  };
  return new LoaderCore({
    config: compileLoaderConfig({ flush: { maxRows: 5000, maxAgeMs: 1 }, backoff: { initialMs: 1, maxMs: 2 }, killsServer: { nodeBackPollMs: 1, nodeBackTimeoutMs: 2000 } }),
    decodeMode: "json-object",
    route: (message) => ({ target: targets[message.partition % targets.length] ?? (targets[0] as LoaderTarget), fields: { t: message.topic, p: message.partition, o: Number(message.offset) } }),
    inserter: {
      insertLines: async (target, lines) => {
        note(`insert ${target.node} ${lines.length}`);
        if (hold.armed && hold.core === label) {
          hold.armed = false;
          hold.reached.resolve();
          await hold.release.promise;
        }
        await server(target).insert(lines.map(rowId));
      },
      nodeAnswers: (target) => {
        note(`ping ${target.node}`);
        return server(target).ping();
      },
    },
    deadLetters: {
      write: (written) => {
        letters.push(...written);
        return Promise.resolve();
      },
    },
    commit: () => Promise.resolve(),
    suspectTurns: turns,
  });
}

function feed(core: LoaderCore, topic: string, partitions: number, perPartition: number): void {
  for (let partition = 0; partition < partitions; partition++) {
    for (let offset = 0n; offset < BigInt(perPartition); offset++) {
      const message: LoaderMessage = { topic, partition, offset, key: null, value: Buffer.from('{"x":1}') };
      core.accept(message);
    }
  }
}

async function runCycle(core: LoaderCore): Promise<void> {
  await core.runCycle({ all: true, ignoreBackoff: true });
}

/**
 * The service's layout: orders (32 rows, partition 0) to ch1; hits partition 0 to ch1 and 1 to ch2
 * (32 rows each). One killer in each of the three batches; two cycles each make all three suspect.
 * Then the orders salvage's first INSERT is held, and the hits cycle starts: it waits on ch1 (when
 * the turn is shared) while its ch2 batch is salvaged to its end. Returns what the hits core did to
 * ch1 by then, and lets everything finish.
 */
async function ordersHoldingCh1(shared: boolean) {
  const killers = new Set(["orders/0@5", "hits/0@7", "hits/1@20"]);
  const servers = new Map([
    ["ch1", new FakeServer("ch1", killers, 31 + 31)],
    ["ch2", new FakeServer("ch2", killers, 31)],
  ]);
  const trace: Trace = { tracing: false, events: [] };
  const hold: InsertHold = { core: "orders", armed: false, reached: deferred(), release: deferred() };
  const letters: DeadLetter[] = [];
  const processTurns = new SuspectTurns();
  const turns = () => (shared ? processTurns : new SuspectTurns());
  const orders = fakeCore("orders", [{ node: "ch1", table: "orders" }], servers, turns(), trace, hold, letters);
  const hits = fakeCore("hits", [{ node: "ch1", table: "hits" }, { node: "ch2", table: "hits" }], servers, turns(), trace, hold, letters);
  feed(orders, "orders", 1, 32);
  feed(hits, "hits", 2, 32);
  for (const core of [orders, hits]) {
    for (let death = 0; death < 2; death++) await runCycle(core);
  }
  assert.equal(letters.length, 0, "nothing is a dead letter before the suspect salvages");

  trace.tracing = true;
  hold.armed = true;
  const ordersCycle = runCycle(orders);
  await hold.reached.promise; // the orders salvage is in ch1's turn, its first INSERT held
  const hitsCycle = runCycle(hits);
  await servers.get("ch2")?.filled.promise; // hits' ch2 batch salvaged to its end meanwhile
  const hitsOnCh1BeforeRelease = trace.events.filter((e) => touches(e, "hits", "ch1"));
  const eventsAtRelease = trace.events.length;
  hold.release.resolve();
  await Promise.all([ordersCycle, hitsCycle]);
  for (const core of [orders, hits]) {
    for (let cycle = 0; cycle < 10 && core.status().unplaced > 0; cycle++) await runCycle(core);
  }
  return { hitsOnCh1BeforeRelease, events: trace.events, eventsAtRelease, servers, letters, orders, hits };
}

describe("one suspect batch in flight to a node, across the process's cores", () => {
  test("SuspectTurns: a node's turns wait for each other; another node's do not; a failed turn frees the next", HANG_GUARD, async () => {
    const turns = new SuspectTurns();
    const events: string[] = [];
    const firstStarted = deferred();
    const releaseFirst = deferred();
    const first = turns.take("ch1", async () => {
      events.push("ch1 first starts");
      firstStarted.resolve();
      await releaseFirst.promise;
      events.push("ch1 first ends");
      throw new Error("the first salvage failed");
    });
    await firstStarted.promise;
    const second = turns.take("ch1", () => {
      events.push("ch1 second starts");
      return Promise.resolve("second done");
    });
    // Taken after the second: had the second not waited, its job was queued first and ran first.
    await turns.take("ch2", () => {
      events.push("ch2 runs");
      return Promise.resolve();
    });
    assert.deepEqual(events, ["ch1 first starts", "ch2 runs"]);
    releaseFirst.resolve();
    await assert.rejects(first, /the first salvage failed/);
    assert.equal(await second, "second done");
    assert.deepEqual(events, ["ch1 first starts", "ch2 runs", "ch1 first ends", "ch1 second starts"]);
  });

  test("two cores sharing the turn: hits waits on ch1 while the orders suspect salvage holds it, its ch2 batch does not; every killer ends alone", HANG_GUARD, async () => {
    const run = await ordersHoldingCh1(true);
    assert.deepEqual(run.hitsOnCh1BeforeRelease, [], "nothing of hits reached ch1 while the orders salvage was held");
    assert.ok(run.events.slice(0, run.eventsAtRelease).some((e) => touches(e, "hits", "ch2")), "hits' ch2 salvage ran meanwhile");
    // Every suspect step of orders on ch1 came before the first of hits on ch1.
    const firstHitsOnCh1 = run.events.findIndex((e) => touches(e, "hits", "ch1"));
    const lastOrdersOnCh1 = run.events.reduce((last, e, index) => (touches(e, "orders", "ch1") ? index : last), -1);
    assert.ok(firstHitsOnCh1 > lastOrdersOnCh1, `hits on ch1 at event ${firstHitsOnCh1}, orders' last at ${lastOrdersOnCh1}: ${run.events.join("; ")}`);
    assert.deepEqual(run.letters.map((l) => `${l.reason} ${l.source.topic}/${l.source.partition}@${l.source.offset}`).sort(), ["kills_server hits/0@7", "kills_server hits/1@20", "kills_server orders/0@5"]);
    for (const server of run.servers.values()) assert.ok([...server.stored.values()].every((n) => n === 1), `${server.name}: every other row landed once`);
    assert.equal(run.servers.get("ch1")?.stored.size, 62);
    assert.equal(run.servers.get("ch2")?.stored.size, 31);
    assert.equal(run.orders.status().unplaced + run.hits.status().unplaced, 0);
  });

  test("control: with a turn object per core, the same run sends hits' suspect work to ch1 while the orders salvage is held there", HANG_GUARD, async () => {
    const run = await ordersHoldingCh1(false);
    assert.notDeepEqual(run.hitsOnCh1BeforeRelease, [], "the checkpoint comes late enough to see an overlap");
  });
});
