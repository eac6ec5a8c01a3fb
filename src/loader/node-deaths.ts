// Node deaths (issue 21, docs/loader.md "Beyond known shapes: kills_server"): which table's batch
// left its node gone how many times in a row, when its next flush becomes a suspect salvage, and the
// per-node turn that keeps one suspect batch in flight to a node for the whole loader process.
import { batchHead, type BufferedRow } from "./buffers.ts";
import type { RowInserter } from "./clickhouse-sink.ts";
import type { LoaderConfig } from "../config/index.ts";
import type { LoaderMetrics } from "./metrics.ts";
import { lostConnection, type Rejection } from "./rejections.ts";
import type { SuspectSalvage } from "./salvage.ts";
import type { LoaderTarget } from "./types.ts";

/** An INSERT after which its node was gone (the connection lost, no answer to a ping). */
export interface NodeDeath {
  node: string;
  table: string;
  /** Rows of the batch (or slice) that was in flight. */
  rows: number;
  /** During the salvage of a suspect batch. */
  suspect: boolean;
}

/**
 * One suspect batch in flight to a node at a time, across every core given the same object (the
 * service's hits and orders cores both write to the first node). A suspect salvage kills its node on
 * purpose, one slice at a time, and takes a slice whose INSERT lost the connection for the killer:
 * a second salvage beside it would die with it and dead-letter innocent rows. Each node's turns form
 * a chain; a node never waits for another.
 */
export class SuspectTurns {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once every turn of `node` taken before it has settled; resolves or rejects as `work` does. */
  take<T>(node: string, work: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(node) ?? Promise.resolve()).then(work, work);
    // The tail only orders the next turn: a failed turn's error reaches its own caller through `run`,
    // and must not stop the node's later turns.
    this.tails.set(node, run.catch(() => undefined));
    return run;
  }
}

export interface NodeDeathWatchDeps {
  killsServer: LoaderConfig["killsServer"];
  /** Pings through its nodeAnswers; without one, no death is ever counted (nothing can tell a death). */
  inserter: RowInserter;
  metrics?: LoaderMetrics;
  now: () => number;
  /** Shared by every core of the process (see SuspectTurns). */
  turns: SuspectTurns;
}

/** A table's batch whose INSERTs left the node gone: its first row, how many deaths in a row. */
interface DeathRun {
  head: string;
  deaths: number;
}

/** A core's node deaths, by table: counts them, says when a batch is suspect, and salvages it in its node's turn. */
export class NodeDeathWatch {
  private readonly runs = new Map<string, DeathRun>();

  constructor(private readonly deps: NodeDeathWatchDeps) {}

  /** Whether the batch of `table` whose first row is `head` died `suspectAfter` times in a row. */
  isSuspect(table: string, head: string): boolean {
    const run = this.runs.get(table);
    return run !== undefined && run.head === head && run.deaths >= this.deps.killsServer.suspectAfter;
  }

  /** Runs a suspect salvage of `node` in its turn (SuspectTurns). */
  inSuspectTurn<T>(node: string, salvage: () => Promise<T>): Promise<T> {
    return this.deps.turns.take(node, salvage);
  }

  /** How a suspect batch of `rows` rows is salvaged on `target`'s node; its deaths go to `seen`. */
  suspectSalvage(table: string, target: LoaderTarget, rows: number, seen: NodeDeath[]): SuspectSalvage {
    const { killsServer } = this.deps;
    const answers = (timeoutMs: number) => this.deps.inserter.nodeAnswers?.(target, timeoutMs) ?? Promise.resolve(true);
    return {
      node: target.node,
      ways: killsServer.splitWays,
      nodeGone: async () => {
        const gone = !(await answers(killsServer.pingTimeoutMs));
        if (gone) this.recordDeath({ node: target.node, table, rows, suspect: true }, seen);
        return gone;
      },
      nodeBack: async () => {
        const until = this.deps.now() + killsServer.nodeBackTimeoutMs;
        for (;;) {
          if (await answers(killsServer.pingTimeoutMs)) return true;
          if (this.deps.now() >= until) return false;
          await new Promise((resolve) => setTimeout(resolve, killsServer.nodeBackPollMs));
        }
      },
    };
  }

  /**
   * Counts deaths in a row of a table's batch with the same first row: a whole batch held because
   * its INSERT lost the connection and the node then did not answer a ping; tries that found the
   * node down in between do not count or reset. At suspectAfter, the next flush salvages it as
   * suspect (salvage.ts). A suspect salvage that had to hold rows because the node did not come
   * back keeps the table suspect, from the first held row. Deaths counted here go to `seen`.
   */
  async countDeaths(table: string, target: LoaderTarget, suspect: boolean, batch: readonly BufferedRow[], held: readonly BufferedRow[], heldBy: Rejection | undefined, seen: NodeDeath[]): Promise<void> {
    const { killsServer, inserter } = this.deps;
    const first = held[0];
    const heldHead = batchHead(held);
    if (suspect) {
      if (first !== undefined && heldBy !== undefined && lostConnection(heldBy)) this.runs.set(table, { head: heldHead, deaths: killsServer.suspectAfter });
      else this.runs.delete(table);
      return;
    }
    const wholeBatch = first !== undefined && first === batch[0] && held.length === batch.length;
    if (!wholeBatch || heldBy === undefined || inserter.nodeAnswers === undefined) {
      this.runs.delete(table);
      return;
    }
    // Tries refused while the node restarts (connection refused, a timeout) do not break the run
    // of deaths: the batch was not sent to a live node in between.
    if (!lostConnection(heldBy)) return;
    if (await inserter.nodeAnswers(target, killsServer.pingTimeoutMs)) {
      this.runs.delete(table);
      return;
    }
    this.recordDeath({ node: target.node, table, rows: batch.length, suspect: false }, seen);
    const previous = this.runs.get(table);
    this.runs.set(table, { head: heldHead, deaths: previous?.head === heldHead ? previous.deaths + 1 : 1 });
  }

  private recordDeath(death: NodeDeath, seen: NodeDeath[]): void {
    seen.push(death);
    this.deps.metrics?.nodeDeaths.inc({ node: death.node, suspect: String(death.suspect) });
  }
}
