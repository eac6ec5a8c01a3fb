// A retried INSERT must reach every view again. A first try can store its rows in a replicated
// table and then fail in a view below it (a shard of ods.event_dist away); the retry sends the same
// block, and a replicated table that drops a duplicate block also skips the views below it, so the
// retry "succeeds" with nothing downstream. The loader's settings (loaderInsertSettings) turn block
// deduplication off; the server's default is shown losing the row, so this test can fail.
// On the test stand's ch1, in a database of its own: landing (Null) → stage_mv → stage
// (ReplicatedMergeTree) → final_mv → final, where final_mv throws while the table `fail` has a row.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { platformForVersion, type Platform } from "../../src/clickhouse/platform.ts";
import { ClickHouseRowInserter, qualifiedTable } from "../../src/loader/clickhouse-sink.ts";
import { loaderInsertSettings } from "../../src/loader/world-loader.ts";
import { createLiveDatabase, type LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";

describe("a retried loader INSERT after a failure below a replicated table", () => {
  let db: LiveDatabase;
  let t: (name: string) => string;
  let platform: Platform;

  before(async () => {
    db = await createLiveDatabase();
    t = (name) => qualifiedTable(db.database, name);
    const [server] = await db.query<{ v: string }>("SELECT version() AS v");
    platform = platformForVersion(server?.v ?? "");
    const statements = [
      `CREATE TABLE ${t("landing")} (n UInt64, s String) ENGINE = Null`,
      `CREATE TABLE ${t("fail")} (on UInt8) ENGINE = Memory`,
      `CREATE TABLE ${t("stage")} (n UInt64, s String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/loader_tests/${db.database}/stage', 'r1') ORDER BY n`,
      `CREATE MATERIALIZED VIEW ${t("stage_mv")} TO ${t("stage")} AS SELECT n, s FROM ${t("landing")}`,
      `CREATE TABLE ${t("final")} (n UInt64, s String) ENGINE = MergeTree ORDER BY n`,
      `CREATE MATERIALIZED VIEW ${t("final_mv")} TO ${t("final")} AS SELECT n, s FROM ${platform.viewChainSource(t("stage_mv"), t("stage"))} ` +
        `WHERE throwIf((SELECT count() FROM ${t("fail")}) > 0) = 0`,
    ];
    for (const query of statements) await db.client.command({ query });
  });

  after(async () => {
    await db.drop();
  });

  async function counts(n: number): Promise<{ stage: number; final: number }> {
    const [row] = await db.query<{ stage: string; final: string }>(
      `SELECT (SELECT count() FROM ${t("stage")} WHERE n = ${n}) AS stage, (SELECT count() FROM ${t("final")} WHERE n = ${n}) AS final`,
    );
    return { stage: Number(row?.stage), final: Number(row?.final) };
  }

  /** First try fails below stage (fail has a row), the retry is the same body with fail emptied. */
  async function failThenRetry(n: number, inserter: ClickHouseRowInserter): Promise<{ stage: number; final: number }> {
    const lines = [Buffer.from(`{"n":${n},"s":"retried"}\n`)];
    await db.client.command({ query: `INSERT INTO ${t("fail")} VALUES (1)` });
    await assert.rejects(inserter.insertLines({ node: "ch1", table: t("landing") }, lines), /throwIf|non zero/i, "the first try fails in final_mv");
    assert.deepEqual(await counts(n), { stage: 1, final: 0 }, "the first try stored its row in stage before final_mv failed");
    await db.client.command({ query: `TRUNCATE TABLE ${t("fail")}` });
    await inserter.insertLines({ node: "ch1", table: t("landing") }, lines);
    return counts(n);
  }

  it("with the loader's settings the retry reaches the views below (stage holds the row twice, final once)", async () => {
    const inserter = new ClickHouseRowInserter(db.client, loaderInsertSettings(platform));
    assert.deepEqual(await failThenRetry(1, inserter), { stage: 2, final: 1 });
  });

  it("with the server's default (deduplication on) the retry returns success and final never gets the row", async () => {
    const inserter = new ClickHouseRowInserter(db.client, {});
    assert.deepEqual(await failThenRetry(2, inserter), { stage: 1, final: 0 });
  });
});
