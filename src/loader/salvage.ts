// Batch salvage: a batch the server rejected for its data is split in halves, and each half tried,
// until every bad row is alone; the good rows land, each bad row becomes a dead letter with the
// rejection that singled it out. A failure that is not the rows' own (transient, schema, unknown)
// stops the salvage: what did not land yet is held, never dead-lettered (a code the caller names in
// splitOnCodes splits the slice instead, down to single rows, which are then held). With k bad rows among n,
// salvage costs about 2·k·log2(n/k) inserts; a budget bounds it, and what the budget did not reach
// is held for the next cycle (which resumes with fewer rows, since the landed ones are gone).
// A suspect batch (its INSERT killed the node twice in a row, loader-core.ts) is salvaged the same
// way with deaths in place of refusals: a slice whose INSERT loses the connection and leaves the node
// not answering is split in `ways` parts, each sent alone once the node answers again, until the row
// that kills the node is alone: a dead letter `kills_server`. With one such row among n that costs
// about log_ways(n) deaths (ways 16, a 20,000-row batch: 4) and ways·log_ways(n) inserts.
// A slice's INSERT that failed because the table's columns changed since the rows were encoded
// (send throws StaleRows) stops the salvage too: that slice and what was not tried yet come back
// as `stale`, to be encoded again against the new columns (loader-core.ts).
import type { BufferedRow } from "./buffers.ts";
import { classifyRejection, killsServerRejection, lostConnection, type Rejection } from "./rejections.ts";

/** Sends one slice as one INSERT; resolves once the server accepted all of it. */
export type SliceSender = (slice: readonly BufferedRow[]) => Promise<void>;

/** Thrown by a sender when a fresh read of the table's columns differs from those the rows were encoded for. */
export class StaleRows extends Error {
  constructor(
    readonly table: string,
    override readonly cause: unknown,
  ) {
    super(`${table}: its columns changed since the rows were encoded`);
  }
}

export interface RejectedRow {
  row: BufferedRow;
  rejection: Rejection;
}

export interface SalvageOutcome {
  landed: BufferedRow[];
  rejected: RejectedRow[];
  /** Rows not placed: to go back to the buffer, in order. */
  held: BufferedRow[];
  /** Why rows were held: the first non-data failure, or a budget note. */
  heldBy: Rejection | undefined;
  inserts: number;
  /** Inserts that failed, with their classification (the sink-down gate reads these). */
  failures: Rejection[];
  /** Inserts of a suspect salvage after which the node was gone. */
  kills: number;
  /** Rows to encode again: the table's columns changed under them (StaleRows). */
  stale: BufferedRow[];
}

/** How a suspect batch is salvaged (see the head of this file). */
export interface SuspectSalvage {
  node: string;
  /** Parts a slice that killed the node is split in (2 is bisection). */
  ways: number;
  /** After an INSERT lost its connection: true when the node does not answer. */
  nodeGone: () => Promise<boolean>;
  /** Waits until the node answers; false when it did not in time (the rest is then held). */
  nodeBack: () => Promise<boolean>;
}

export interface SalvageOptions {
  insertBudget: number;
  errorTextCapBytes: number;
  /** Codes that split a failed slice in halves like a data rejection, although they are not the
   * rows' fault: a single row failing with one is held, never dead-lettered (loader-core.ts uses
   * it for a batch that code 252 keeps refusing). */
  splitOnCodes?: ReadonlySet<number>;
  suspect?: SuspectSalvage;
}

/** Why rows were held when the salvage spent its insert budget: not a fault, so no backoff. */
export const BUDGET_SPENT: Rejection = { kind: "unknown", code: undefined, reason: "salvage_budget_spent", text: "salvage insert budget spent; the rest waits for the next flush cycle" };

/** `slice` cut in at most `ways` parts of nearly equal length, in order. */
export function splitSlice<T>(slice: readonly T[], ways: number): T[][] {
  const parts: T[][] = [];
  const count = Math.min(Math.max(2, ways), slice.length);
  for (let k = 0; k < count; k++) parts.push(slice.slice(Math.floor((k * slice.length) / count), Math.floor(((k + 1) * slice.length) / count)));
  return parts;
}

/** Why rows of a suspect batch were held: the node did not answer again in time. */
function nodeNotBack(node: string, after: Rejection): Rejection {
  return { kind: "transient", code: undefined, reason: after.reason, text: `${node} did not answer again after an INSERT of a suspect batch lost its connection (${after.text}); the rest waits` };
}

/** Inserts `rows` into `target`, salvaging around data rejections (and, for a suspect batch, node deaths). */
export async function insertWithSalvage(send: SliceSender, rows: readonly BufferedRow[], options: SalvageOptions): Promise<SalvageOutcome> {
  const outcome: SalvageOutcome = { landed: [], rejected: [], held: [], heldBy: undefined, inserts: 0, failures: [], kills: 0, stale: [] };
  const { suspect } = options;
  // Work list of slices, in order; a rejected slice is replaced by its two halves.
  // A suspect batch died whole already: its parts go first.
  const pending: BufferedRow[][] = rows.length === 0 ? [] : suspect !== undefined && rows.length > 1 ? splitSlice(rows, suspect.ways) : [rows.slice()];
  if (suspect !== undefined && pending.length > 0 && !(await suspect.nodeBack())) {
    outcome.heldBy = nodeNotBack(suspect.node, { kind: "transient", code: undefined, reason: "node_down", text: "not answering before the first try" });
  }
  while (pending.length > 0) {
    const slice = pending.shift();
    if (slice === undefined) break;
    if (outcome.heldBy !== undefined) {
      outcome.held.push(...slice);
      continue;
    }
    if (outcome.inserts >= options.insertBudget) {
      outcome.heldBy = BUDGET_SPENT;
      outcome.held.push(...slice);
      continue;
    }
    outcome.inserts++;
    try {
      await send(slice);
      outcome.landed.push(...slice);
    } catch (err) {
      if (err instanceof StaleRows) {
        outcome.stale.push(...slice, ...pending.flat());
        pending.length = 0;
        break;
      }
      const rejection = classifyRejection(err, options.errorTextCapBytes);
      outcome.failures.push(rejection);
      if (suspect !== undefined && lostConnection(rejection) && (await suspect.nodeGone())) {
        outcome.kills++;
        if (slice.length === 1 && slice[0] !== undefined) outcome.rejected.push({ row: slice[0], rejection: killsServerRejection(suspect.node, rejection.text) });
        else pending.unshift(...splitSlice(slice, suspect.ways));
        if (!(await suspect.nodeBack())) outcome.heldBy = nodeNotBack(suspect.node, rejection);
        continue;
      }
      const splits = rejection.kind === "data" || (slice.length > 1 && rejection.code !== undefined && options.splitOnCodes?.has(rejection.code) === true);
      if (!splits) {
        outcome.heldBy = rejection;
        outcome.held.push(...slice);
      } else if (slice.length === 1 && slice[0] !== undefined) {
        outcome.rejected.push({ row: slice[0], rejection });
      } else {
        const middle = Math.ceil(slice.length / 2);
        pending.unshift(slice.slice(0, middle), slice.slice(middle));
      }
    }
  }
  return outcome;
}
