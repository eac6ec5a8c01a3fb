// docs/api.md's table of every call in Airflow's REST API matches the routes the app mounts
// (testkit/runner/api-calls.ts writes it): a call served, refused with 501 or missing is said so.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { TABLE_END, TABLE_START, callsTable } from "../../testkit/runner/api-calls.ts";

void describe("docs/api.md's table of Airflow's calls", () => {
  void it("is what the app serves, call by call", () => {
    const doc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);
    assert.ok(start >= 0 && end > start, "docs/api.md has the table's markers");
    const expected = callsTable();
    assert.equal(doc.slice(start, end + TABLE_END.length), expected, "run `node --import tsx testkit/runner/api-calls.ts` and paste its table into docs/api.md");
    const counts = /(\d+) calls: (\d+) served, (\d+) answer 501, (\d+) not served yet/.exec(expected);
    assert.ok(counts, "the table says its counts");
    assert.equal(Number(counts[2]) + Number(counts[3]) + Number(counts[4]), Number(counts[1]));
  });
});
