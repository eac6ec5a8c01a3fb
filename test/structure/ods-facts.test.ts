// One query per fact: the world's ODS counts (valid hits per day, refused hits per day and class)
// are read only through src/world/ods-facts.ts, whose SQL is sql/facts/. Product code that counts
// ODS hits some other way would be a fifth reading that can drift from the other four.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";
import { ODS_FACTS, odsRefusedHitsPerDateSql, odsValidHitsPerDateSql } from "../../src/world/ods-facts.ts";

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** SQL text (not a comment, not a message) that reads the hits of ODS: FROM / JOIN one of its hit tables. */
const ODS_HITS_READ = /\b(FROM|JOIN)\s+ods\.(event|event_dist|event_v|event_errors|event_errors_dist|event_errors_v)\b/i;

test("product code reads ODS hits only through the ODS facts", () => {
  const offenders: string[] = [];
  for (const room of ["src", "tasks", "dags"]) {
    for (const file of tsFiles(path.join(repoRoot, room))) {
      if (file.endsWith(path.join("src", "world", "ods-facts.ts"))) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (ODS_HITS_READ.test(line)) offenders.push(`${path.relative(repoRoot, file)}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  assert.deepEqual(offenders, [], "count ODS hits with src/world/ods-facts.ts (sql/facts/), not a query of your own");
});

test("the facts render: a date list, every date, no date", () => {
  assert.deepEqual([...ODS_FACTS], ["ods-valid-hits-per-date", "ods-refused-hits-per-date"]);
  assert.match(odsValidHitsPerDateSql(["2025-03-01", "2025-03-02"]), /FROM ods\.event_dist FINAL\s+WHERE EventDate IN \('2025-03-01', '2025-03-02'\)/);
  assert.match(odsValidHitsPerDateSql(), /WHERE 1\s/);
  assert.match(odsValidHitsPerDateSql([]), /WHERE 0\s/, "an empty date list counts nothing, not everything");
  assert.match(odsRefusedHitsPerDateSql(), /FROM ods\.event_errors_dist FINAL/);
  assert.match(odsValidHitsPerDateSql(["x'); DROP TABLE t; --"]), /IN \('x\\'\); DROP TABLE t; --'\)/, "dates are quoted literals");
});
