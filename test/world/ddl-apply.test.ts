// applyDdlFile's failures on the real 18.16 server: a broken statement is named by file, number,
// line and first line with the server's own words; an unknown placeholder is named before anything
// runs; a refusal names the account. The files live in a temporary directory and touch nothing
// outside lifecycle's probe database.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { WorldTaskError } from "../../src/world/io.ts";
import { applyDdlFile, DdlStatementError, listDdlFiles } from "../../tasks/ddl.ts";
import { recordingIo } from "../../testkit/world/recording-io.ts";

let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ddl-apply-"));
  await writeFile(path.join(dir, "10-broken.sql"), "-- a file with one bad statement\nSELECT 1;\n\n-- the second one is misspelt\nSELEC 2\nFROM system.one;\nSELECT 3;\n");
  await writeFile(path.join(dir, "20-unknown-placeholder.sql"), "SELEC 'would fail if it ran';\nSELECT {{no_such_value}};\n");
  await writeFile(path.join(dir, "30-forbidden.sql"), "CREATE DATABASE IF NOT EXISTS world_test_not_allowed;\n");
  await writeFile(path.join(dir, "05-fine.sql"), "SELECT 1;\nSELECT 'a;b' AS `x;y`;\n");
  await writeFile(path.join(dir, "notes.txt"), "not a DDL file\n");
});

after(() => rm(dir, { recursive: true, force: true }));

test("listDdlFiles lists only .sql files, by name", async () => {
  assert.deepEqual(await listDdlFiles(dir), ["05-fine.sql", "10-broken.sql", "20-unknown-placeholder.sql", "30-forbidden.sql"]);
});

test("a good file runs every statement and reports its checksum", async () => {
  const io = recordingIo();
  const applied = await applyDdlFile({ ...io, file: "05-fine.sql", dir });
  assert.equal(applied.statements, 2);
  assert.match(applied.checksum, /^[0-9a-f]{64}$/);
  assert.match(applied.platformVersion, /^18\.16\./);
  assert.ok(io.lines.some((l) => l.includes("2/2 (line 2) SELECT 'a;b' AS `x;y`")), io.lines.join("\n"));
});

test("a broken statement fails naming the file, the statement number and line, its first line and the server's text", async () => {
  const io = recordingIo();
  await assert.rejects(applyDdlFile({ ...io, file: "10-broken.sql", dir }), (err: unknown) => {
    assert.ok(err instanceof DdlStatementError);
    assert.match(err.message, /10-broken\.sql: statement 2 \(line 5\) failed as lifecycle on ch1: SELEC 2/);
    assert.match(err.message, /server said: Code: 62/);
    assert.match(err.message, /Syntax error/);
    return true;
  });
  assert.ok(io.lines.some((l) => l.includes("1/3")), "the statement before it ran");
  assert.ok(!io.lines.some((l) => l.includes("3/3")), "the statement after it did not run");
});

test("an unknown placeholder fails naming the file, the line and the placeholder, before any statement runs", async () => {
  // statement 1 is broken too: had it been sent, the error would be the server's syntax error
  await assert.rejects(applyDdlFile({ ...recordingIo(), file: "20-unknown-placeholder.sql", dir }), (err: unknown) => {
    assert.ok(err instanceof WorldTaskError && !(err instanceof DdlStatementError));
    assert.match(err.message, /20-unknown-placeholder\.sql:2: unknown placeholder \{\{no_such_value\}\}/);
    return true;
  });
});

test("a refusal names the account the DDL runs as", async () => {
  await assert.rejects(applyDdlFile({ ...recordingIo(), file: "30-forbidden.sql", dir }), (err: unknown) => {
    assert.ok(err instanceof DdlStatementError);
    assert.match(err.message, /30-forbidden\.sql: statement 1 \(line 1\) failed as lifecycle on ch1/);
    assert.match(err.message, /Code: 291.*Access denied to database world_test_not_allowed for user lifecycle/);
    return true;
  });
});
