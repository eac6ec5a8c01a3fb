// Airflow's bulk calls (PATCH on variables, connections, DAG runs, task instances): actions applied
// in order, each answering its successes and errors, gathered per kind of action in the answer.
import type { BulkResponse } from "./responses.ts";

export interface BulkActionResult {
  success: string[];
  errors: { error: string; status_code: number }[];
}

/** Applies each action in order; two actions of a kind add up in the answer's entry for it. */
export async function runBulkActions<A extends { action: "create" | "update" | "delete" }>(actions: readonly A[], apply: (action: A) => Promise<BulkActionResult>): Promise<BulkResponse> {
  const answer: BulkResponse = {};
  for (const action of actions) {
    const result = await apply(action);
    const previous = answer[action.action];
    answer[action.action] = previous ? { success: [...previous.success, ...result.success], errors: [...previous.errors, ...result.errors] } : result;
  }
  return answer;
}
