// src/runner/schema.sql is what the runner's migrations add up to: a reader trusts it only while it
// is the dump of a freshly migrated database, so a migration added without `make runner-schema`
// fails here, with the first line that differs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { RUNNER_SCHEMA_FILE, dumpRunnerSchema } from "../../testkit/runner/runner-schema.ts";

test("src/runner/schema.sql is the dump of the runner schema after the last migration", async () => {
  const fresh = await dumpRunnerSchema();
  const checkedIn = readFileSync(RUNNER_SCHEMA_FILE, "utf8");
  if (fresh === checkedIn) return;
  const a = checkedIn.split("\n");
  const b = fresh.split("\n");
  const at = a.findIndex((line, i) => line !== b[i]);
  const line = at === -1 ? a.length : at;
  assert.fail(
    `src/runner/schema.sql is stale from line ${line + 1}: it has ${JSON.stringify(a[line])}, the migrations give ${JSON.stringify(b[line])}. Run make runner-schema and commit the file.`,
  );
});

test("the dump is the final form: each state-machine function once, no migration history", () => {
  const text = readFileSync(RUNNER_SCHEMA_FILE, "utf8");
  for (const fn of ["create_run", "complete_run"]) {
    const definitions = text.match(new RegExp(`CREATE FUNCTION runner\\.${fn}\\(`, "g")) ?? [];
    assert.equal(definitions.length, 1, `runner.${fn} is defined ${definitions.length} times in src/runner/schema.sql`);
  }
});
