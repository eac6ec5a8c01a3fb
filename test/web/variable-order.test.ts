// A variable's changes are shown newest first in the order they were written, even when two of them
// carry the same millisecond (a full make test once showed the older above the newer: the page
// sorted by time, and equal times kept the oldest first).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RunnerService } from "../../src/runner/service.ts";
import type { VariableChange } from "../../src/runner/types.ts";
import { buildVariableHistoryView } from "../../src/web/pages/variables.ts";

const at = new Date("2026-12-03T19:50:00.123Z");
const change = (oldValue: string | null, newValue: string): VariableChange => ({ key: "note", oldValue, newValue, changedAt: at, changedBy: "api:test", dagId: null, runId: null });
// as runner.variable_history gives them: in the order written
const history = [change(null, "first"), change("first", "second"), change("second", "third")];
const runner = {
  variableHistory: () => Promise.resolve(history),
  getVariable: () => Promise.resolve({ key: "note", value: "third", description: null }),
} as unknown as RunnerService;

describe("a variable's history on its page", () => {
  it("newest first, by the order written, when the changes share one millisecond", async () => {
    const view = await buildVariableHistoryView(runner, "note", 0);
    assert.deepEqual(view.changes.map((c) => c.newValue), ["third", "second", "first"]);
  });
});
