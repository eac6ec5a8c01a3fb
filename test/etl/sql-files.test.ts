// The ETL's SQL files without a server: the dds/dm DDL sorts between the ODS files and the hits
// ingest and renders for 18.16 and a modern server; every ETL file renders with the values the
// tasks give it; transforms hold only SELECT / INSERT … SELECT (etl has no DDL right) and commit
// each target after its data; check queries are single SELECTs.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { platformForVersion } from "../../src/clickhouse/platform.ts";
import { loadStandConfig } from "../../src/config/stand.ts";
import { DDL_DIR } from "../../src/world/constants.ts";
import { renderTemplate } from "../../src/clickhouse/sql-template.ts";
import { readCatalogCsv, worldTemplateValues } from "../../src/world/ddl-template.ts";
import { splitSqlStatements } from "../../src/clickhouse/sql-statements.ts";
import { listDdlFiles } from "../../tasks/ddl.ts";
import { listTransformFiles, readTransformFile } from "../../tasks/etl.ts";
import { readSqlFile, type SqlFile } from "../../src/clickhouse/sql-files.ts";
import { CHECKS_DIR } from "../../src/world-ops/checks.ts";
import { ETL_DIR, runTemplateValues } from "../../tasks/etl-sql.ts";
import { claimBound, instantFromIsoField } from "../../tasks/orders.ts";

const OUR_DDL = ["45-dds-tables.sql", "50-dds-views.sql", "55-dm-tables.sql", "60-dm-views.sql"];
const PLATFORMS = [platformForVersion("18.16.1"), platformForVersion("25.8.1")];

test("the dds and dm DDL files sort after the ODS files and before the hits ingest", async () => {
  const files = await listDdlFiles();
  const positions = OUR_DDL.map((f) => files.indexOf(f));
  assert.ok(positions.every((p) => p >= 0), `all listed: ${files.join(", ")}`);
  for (const f of files) {
    if (f.startsWith("90")) assert.ok(positions.every((p) => p < files.indexOf(f)), `${f} after ours`);
    if (f < "40") assert.ok(positions.every((p) => p > files.indexOf(f)), `${f} before ours`);
  }
});

test("the dds and dm DDL renders for 18.16 and modern servers, every statement ON CLUSTER and re-runnable", async () => {
  for (const platform of PLATFORMS) {
    const values = worldTemplateValues({ platform, config: loadStandConfig(), catalogCsv: await readCatalogCsv() });
    for (const file of OUR_DDL) {
      const text = await readFile(path.join(DDL_DIR, file), "utf8");
      text.split("\n").forEach((line, i) => assert.doesNotMatch(line, /--.*\{\{/, `${file}:${i + 1}: no placeholder in a comment`));
      for (const statement of splitSqlStatements(text)) {
        const sql = renderTemplate(statement.text, values, file, statement.line);
        assert.match(sql, /^CREATE (TABLE|VIEW) IF NOT EXISTS \w+\.\w+ ON CLUSTER /, `${file}:${statement.line}`);
        const loadTs = /^\s+_load_ts ([^\n]+?),?$/m.exec(sql)?.[1];
        if (/^CREATE TABLE .* ON CLUSTER \S+\s*\n\(/.test(sql)) {
          assert.equal(loadTs, platform.instantType, `${file}:${statement.line}: _load_ts has the platform's instant type`);
        }
      }
    }
  }
});

test("every versioned table has a _dist table keyed by a function of its grain, and a committed-version view", async () => {
  const tables = await readFile(path.join(DDL_DIR, "45-dds-tables.sql"), "utf8") + (await readFile(path.join(DDL_DIR, "55-dm-tables.sql"), "utf8"));
  const views = await readFile(path.join(DDL_DIR, "50-dds-views.sql"), "utf8") + (await readFile(path.join(DDL_DIR, "60-dm-views.sql"), "utf8"));
  const versioned = [...tables.matchAll(/CREATE TABLE IF NOT EXISTS (\w+)\.(\w+) ON CLUSTER \{\{cluster\}\}\s*\(([\s\S]*?)\)\s*ENGINE = ReplicatedReplacingMergeTree\([^)]*, _version\)\s*(?:PARTITION BY [^\n]+\s*)?ORDER BY \(?([^)\n;]+)/g)];
  assert.equal(versioned.length, 11, "4 dds + 7 dm tables");
  for (const [, db, table, , orderBy] of versioned) {
    const key = new RegExp(`CREATE TABLE IF NOT EXISTS ${db}\\.${table}_dist ON CLUSTER \\{\\{cluster\\}\\} AS ${db}\\.${table}\\s*ENGINE = Distributed\\(\\{\\{cluster\\}\\}, ${db}, ${table}, cityHash64\\(([^)]*)\\)\\)`).exec(tables);
    assert.ok(key?.[1], `${db}.${table}_dist exists`);
    const grain = (orderBy ?? "").split(",").map((c) => c.trim());
    for (const column of key[1].split(",").map((c) => c.trim())) assert.ok(grain.includes(column), `${db}.${table}: shard key column ${column} is in the grain (${grain.join(", ")})`);
    if (table === "dq_summary") {
      // DQ results are published per day by run, not by version: the rows of the run of the day's newest commit
      assert.match(views, /FROM \(SELECT \* FROM dm\.dq_summary_dist FINAL\)[\s\S]*?WHERE target = 'dq_summary'[\s\S]*?USING \(data_date, _load_id\)/, "dm.dq_summary view shows the published run");
    } else if (table !== "load_ledger") {
      assert.match(views, new RegExp(`FROM \\(SELECT \\* FROM ${db}\\.${table}_dist FINAL\\)[\\s\\S]*?WHERE target = '${table}'[\\s\\S]*?WHERE _version >= committed_version`), `${db}.${table} view filters on its commits`);
    }
  }
});

/** Every ETL file as its task runs it: a transform file with the shared ledger commit taken in (the ledger fragment is tested inside them). */
async function etlFiles(): Promise<SqlFile[]> {
  const top = (await readdir(ETL_DIR)).filter((f) => f.endsWith(".sql") && !f.endsWith(".fragment.sql")).map((f) => readSqlFile(path.join(ETL_DIR, f), "test"));
  const orders = (await readdir(path.join(ETL_DIR, "orders"))).filter((f) => /^\d{2}-.+\.sql$/.test(f)).map((f) => readSqlFile(path.join(ETL_DIR, "orders", f), "test"));
  const transforms = await Promise.all((["dds", "dm"] as const).map(async (layer) => (await listTransformFiles(layer)).map((f) => readTransformFile(layer, f, "test"))));
  return Promise.all([...top, ...orders, ...transforms.flat()]);
}

test("the orders claim is bounded per partition by the end offsets read before it, and claims nothing without them", () => {
  assert.equal(claimBound(new Map([[1, 7], [0, 68]])), "((kafka_partition = 0 AND kafka_offset < 68) OR (kafka_partition = 1 AND kafka_offset < 7))");
  assert.equal(claimBound(new Map()), "0");
});

test("every ETL file renders with the values its task gives, and holds only SELECT or INSERT … SELECT", async () => {
  for (const platform of PLATFORMS) {
    const values: Record<string, string> = {
      ...runTemplateValues(platform, { version: 42n, loadId: "run-1", startedAt: "2026-06-02 00:00:00", dates: ["2026-06-02", "2026-06-01"] }),
      "run.redo_days": "1",
      "run.late_margin_seconds": "120",
      "orders.topic": "'orders'",
      "orders.verdict": "('')",
      "orders.created_at": instantFromIsoField(platform, "created_at"),
      "orders.updated_at": instantFromIsoField(platform, "updated_at"),
      "orders.claim_bound": claimBound(new Map([[0, 68]])),
    };
    assert.equal(values["run.date_set"], "('2026-06-01', '2026-06-02')");
    for (const file of await etlFiles()) {
      assert.ok(file.statements.length > 0, `${file.name} has statements`);
      for (const statement of file.statements) {
        const sql = renderTemplate(statement.text, values, file.name, statement.line);
        assert.match(sql, /^(SELECT|INSERT INTO \w+\.\w+_dist\b[\s\S]*\bSELECT\b)/, `${file.name}:${statement.line}: ${statement.firstLine}`);
        assert.doesNotMatch(sql, /\b(CREATE|DROP|TRUNCATE|ALTER|OPTIMIZE|RENAME)\s+(TABLE|DATABASE|VIEW|PARTITION)/i, `${file.name}:${statement.line}`);
      }
    }
  }
});

test("each transform file, as it runs, commits every target it writes, after the data, counting that target's rows", async () => {
  for (const layer of ["dds", "dm"] as const) {
    for (const name of await listTransformFiles(layer)) {
      const file = await readTransformFile(layer, name, "test");
      const targets = file.statements.map((s) => /^INSERT INTO (\w+)\.(\w+)_dist/.exec(s.text)).map((m) => (m ? `${m[1]}.${m[2]}` : ""));
      assert.equal(targets.at(-1), `${layer}.load_ledger`, `${name}: the commit is the last statement`);
      const data = targets.slice(0, -1);
      assert.ok(data.length > 0 && data.every((t) => t.startsWith(`${layer}.`) && t !== `${layer}.load_ledger`), `${name}: data first (${data.join(", ")})`);
      const committed = /SELECT '(\w+)'/.exec(file.statements.at(-1)?.text ?? "")?.[1];
      assert.ok(data.includes(`${layer}.${committed}`), `${name}: commits the target it wrote (${committed})`);
      assert.match(file.statements.at(-1)?.text ?? "", new RegExp(`\\bFROM ${layer}\\.${committed}_dist\\b`), `${name}: the commit counts the rows of ${layer}.${committed}`);
    }
  }
});

test("check queries are one SELECT each", async () => {
  for (const name of (await readdir(CHECKS_DIR)).filter((f) => f.endsWith(".sql"))) {
    const file = await readSqlFile(path.join(CHECKS_DIR, name), "test");
    assert.equal(file.statements.length, 1, name);
    assert.match(file.statements[0]?.text ?? "", /^SELECT\b/, name);
  }
});

test("run values refuse malformed days and take the orders instant type from the platform", () => {
  const platform = PLATFORMS[0];
  assert.ok(platform);
  assert.throws(() => runTemplateValues(platform, { version: 1n, loadId: "x", startedAt: "2026-01-01 00:00:00", dates: ["2026-6-1"] }), /not a date/);
  assert.equal(runTemplateValues(platform, { version: 1n, loadId: "x", startedAt: "2026-01-01 00:00:00", dates: [] })["run.date_set"], undefined);
  assert.match(instantFromIsoField(platformForVersion("18.16.1"), "created_at"), /^toDateTimeOrZero\(/);
  assert.match(instantFromIsoField(platformForVersion("25.8.1"), "created_at"), /^parseDateTime64BestEffortOrZero\(/);
});
