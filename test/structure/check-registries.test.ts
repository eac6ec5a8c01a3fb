// One registry per kind of check, matched against its folder at load: a .sql file without its
// entry (or an entry without its file) is an error naming it, never a check silently not run.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { registeredSqlFiles } from "../../src/clickhouse/sql-files.ts";
import { STAND_CHECK_QUERIES } from "../../src/world-ops/checks.ts";
import { DQ_CHECKS } from "../../tasks/dq.ts";

test("the repository's registries name every file of their folders (they loaded)", () => {
  assert.ok(DQ_CHECKS.length >= 8);
  assert.ok(STAND_CHECK_QUERIES.includes("dds-sessions-per-date"));
});

test("a file that is not registered, or a name without its file, is an error naming it", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "registry-"));
  try {
    writeFileSync(path.join(dir, "a.sql"), "SELECT 1");
    writeFileSync(path.join(dir, "b.sql"), "SELECT 2");
    writeFileSync(path.join(dir, "notes.md"), "not a check");
    assert.deepEqual(registeredSqlFiles(dir, ["a", "b"], "a test check"), ["a", "b"]);
    assert.throws(() => registeredSqlFiles(dir, ["a"], "a test check"), /b\.sql is not registered as a test check/);
    assert.throws(() => registeredSqlFiles(dir, ["a", "b", "c"], "a test check"), /a test check c has no \.sql file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
