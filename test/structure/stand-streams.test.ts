// The lists that let a stand lane run files side by side (scripts/run-tests.sh --lane): the files of
// test/stand-beside.txt run beside the world files, so none of them may reach what a world file
// changes or restarts; the files of test/stand-stops-postgres.txt run last, alone with the lane's
// Postgres. A file that starts using the stand's runner, ClickHouse or Kafka fails here, named.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";
import { readListFile } from "../../scripts/test-lanes.ts";

const beside = readListFile(path.join(repoRoot, "test/stand-beside.txt"));
const stopsPostgres = readListFile(path.join(repoRoot, "test/stand-stops-postgres.txt"));
const serviceFree = new Set(readListFile(path.join(repoRoot, "test/service-free.txt")));

/** What a beside file must not import or name: the world lock, the stand's services and their clients. */
const SHARED_STAND = [
  /testkit\/stand\/(world-lock|world-suite|live-stand)\.ts/, /testkit\/world\/(rest-world|loader-day|faulted-day)\.ts/,
  /src\/stand\/stand\.ts/, /src\/services\/(runner-service|loader-service)\.ts/, /src\/keeper\/keeper-service\.ts/, /src\/clickhouse\/client\.ts/,
  /\bkafkajs\b/, /\bapiBaseUrl\b/, /\bstandContext\b/, /\bconnectClickHouse\b/,
  /api\/v2\/system\/schema/, // the schema status reads the stand's ClickHouse and ledger
];

describe("the files that run beside the world files, and the ones that stop Postgres", () => {
  it("name test files of the stand lanes, each in at most one list", () => {
    assert.ok(beside.length > 0 && stopsPostgres.length > 0);
    for (const file of [...beside, ...stopsPostgres]) {
      assert.ok(existsSync(path.join(repoRoot, file)), `${file} is listed but does not exist`);
      assert.ok(file.endsWith(".test.ts") && !serviceFree.has(file), `${file} is not a stand test file`);
    }
    const both = beside.filter((f) => stopsPostgres.includes(f));
    assert.deepEqual(both, [], "in both lists");
  });

  it("a beside file reaches only Postgres, through a database of its own", () => {
    for (const file of beside) {
      const text = readFileSync(path.join(repoRoot, file), "utf8");
      const reached = SHARED_STAND.filter((pattern) => pattern.test(text)).map(String);
      assert.deepEqual(reached, [], `${file} names the shared stand (${reached.join(", ")}): take it out of test/stand-beside.txt`);
    }
  });

  it("a file that kills or restarts Postgres, or stops the stand, is in test/stand-stops-postgres.txt", () => {
    const stopsIt = /pidOf\("postgres"\)|kept\("postgres"\)|POSTGRES_AT_BOUNDARIES|standDown\(/;
    const files = readdirSync(path.join(repoRoot, "test"), { recursive: true })
      .map((f) => `test/${String(f)}`)
      .filter((f) => f.endsWith(".test.ts") && !serviceFree.has(f) && f !== "test/structure/stand-streams.test.ts");
    const unlisted = files.filter((f) => stopsIt.test(readFileSync(path.join(repoRoot, f), "utf8")) && !stopsPostgres.includes(f));
    assert.deepEqual(unlisted, [], "these stop Postgres or the stand: list them in test/stand-stops-postgres.txt");
    for (const file of ["test/faults/keeper-faults.test.ts", "test/faults/step-faults.test.ts", "test/snapshots/world-snapshots.test.ts"]) {
      assert.ok(stopsIt.test(readFileSync(path.join(repoRoot, file), "utf8")), `${file}: the rule no longer sees what it stops`);
    }
  });
});
