// Batch salvage: a batch the server rejected for its data is split in halves, and each half tried,
// until every bad row is alone; the good rows land, each bad row becomes a dead letter with the
// rejection that singled it out. A failure that is not the rows' own (transient, schema, unknown)
// stops the salvage: what did not land yet is held, never dead-lettered (a code the caller names in
// splitOnCodes splits the slice instead, down to single rows, which are then held). With k bad rows among n,
// salvage costs about 2·k·log2(n/k) inserts; a budget bounds it, and what the budget did not reach
// is held for the next cycle (which resumes with fewer rows, since the landed ones are gone).
import type { BufferedRow } from "./buffers.ts";
import type { RowInserter } from "./clickhouse-sink.ts";
import { classifyRejection, type Rejection } from "./rejections.ts";
import type { LoaderTarget } from "./types.ts";

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
}

export interface SalvageOptions {
  insertBudget: number;
  errorTextCapBytes: number;
  /** Codes that split a failed slice in halves like a data rejection, although they are not the
   * rows' fault: a single row failing with one is held, never dead-lettered (loader-core.ts uses
   * it for a batch that code 252 keeps refusing). */
  splitOnCodes?: ReadonlySet<number>;
}

/** Why rows were held when the salvage spent its insert budget: not a fault, so no backoff. */
export const BUDGET_SPENT: Rejection = { kind: "unknown", code: undefined, reason: "salvage_budget_spent", text: "salvage insert budget spent; the rest waits for the next flush cycle" };

/** Inserts `rows` into `target`, salvaging around data rejections. */
export async function insertWithSalvage(inserter: RowInserter, target: LoaderTarget, rows: readonly BufferedRow[], options: SalvageOptions): Promise<SalvageOutcome> {
  const outcome: SalvageOutcome = { landed: [], rejected: [], held: [], heldBy: undefined, inserts: 0, failures: [] };
  // Work list of slices, in order; a rejected slice is replaced by its two halves.
  const pending: BufferedRow[][] = rows.length > 0 ? [rows.slice()] : [];
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
      await inserter.insertLines(target, slice.map((row) => row.line));
      outcome.landed.push(...slice);
    } catch (err) {
      const rejection = classifyRejection(err, options.errorTextCapBytes);
      outcome.failures.push(rejection);
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
