// world_position, the one state of the world's model time, and what each DAG decides from it
// (SPEC's position table). Pure functions, so the table is testable without a runner.
//
//   position       world_initialize            step DAGs (world_next_day, world_live_day)
//   no variable    creates the world           red: no world, run make up
//   -1             red: cleanup unfinished     red: run make rebuild-storage
//   0              creates the world           red: run make up
//   1..START-1     red, same refusal as -1     red: run make rebuild-storage
//   >= START       green, no change            work
// world_recreate cleans and creates whatever it reads, so it does not read it at all.

export const WORLD_POSITION_KEY = "world_position";

/** The DAGs that own the world (dags/index.ts worldDags; a test keeps the two lists equal). */
export const WORLD_DAG_IDS: readonly string[] = Object.freeze([
  "world_initialize",
  "world_recreate",
  "world_next_day",
  "world_live_day",
  "world_live",
  "orders_ingest",
  "etl_pipeline",
  "dds_transform",
  "dm_transform",
  "dq_check",
  "world_snapshot",
  "world_restore",
]);

export type PositionReading =
  | { kind: "missing" }
  | { kind: "number"; value: number }
  /** Something that is not a whole number (edited by hand). */
  | { kind: "unreadable"; text: string };

export function readPosition(text: string | null): PositionReading {
  if (text === null) return { kind: "missing" };
  const trimmed = text.trim();
  if (!/^-?\d+$/.test(trimmed)) return { kind: "unreadable", text };
  return { kind: "number", value: Number(trimmed) };
}

export function describePosition(reading: PositionReading): string {
  if (reading.kind === "missing") return `${WORLD_POSITION_KEY} is not set`;
  if (reading.kind === "unreadable") return `${WORLD_POSITION_KEY} is '${reading.text}', not a whole number`;
  return `${WORLD_POSITION_KEY} is ${reading.value}`;
}

export type InitializeDecision =
  | { action: "create" }
  | { action: "exists"; position: number }
  | { action: "refuse"; message: string };

/** What world_initialize does at this position. */
export function initializeDecision(reading: PositionReading, startingDays: number): InitializeDecision {
  if (reading.kind === "missing") return { action: "create" };
  if (reading.kind === "unreadable") {
    return { action: "refuse", message: `${describePosition(reading)}: the world's state is unknown; run make rebuild-storage` };
  }
  const value = reading.value;
  if (value === 0) return { action: "create" };
  if (value >= startingDays) return { action: "exists", position: value };
  const why =
    value === -1 ? "the last world_recreate did not finish its cleanup" : `DAGs only ever set -1, 0 or a day count of at least ${startingDays}`;
  return {
    action: "refuse",
    message: `${describePosition(reading)}: cleanup unfinished, run make rebuild-storage (${why}; the world is invalid and world_initialize will not build on it)`,
  };
}

/** A step DAG's guard: undefined when it may work, else the refusal naming the value and the next step. */
export function stepRefusal(dagId: string, reading: PositionReading, startingDays: number): string | undefined {
  if (reading.kind === "number" && reading.value >= startingDays) return undefined;
  const read = describePosition(reading);
  const prefix = `${dagId} refused: ${read} (a ready world is at ${startingDays} or more)`;
  if (reading.kind === "missing" || (reading.kind === "number" && reading.value === 0)) {
    return `${prefix}: there is no world yet; bring the stand up with make up (world_initialize creates it)`;
  }
  if (reading.kind === "number" && reading.value === -1) {
    return `${prefix}: a world_recreate did not finish its cleanup; run make rebuild-storage`;
  }
  return `${prefix}: the world is in an invalid state; run make rebuild-storage`;
}
