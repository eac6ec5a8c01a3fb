// The DDL templates without a server: every file splits and renders for 18.16 and for a modern
// server (25.8); the server-dependent fragments differ as the platform layer says, and nothing
// 18.16-only is left in the modern rendering. Also the splitter's numbering and line numbers.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { platformForVersion } from "../../src/clickhouse/platform.ts";
import { loadStandConfig } from "../../src/config/stand.ts";
import { DDL_DIR } from "../../src/world/constants.ts";
import { renderTemplate } from "../../src/clickhouse/sql-template.ts";
import { readCatalogCsv, worldTemplateValues } from "../../src/world/ddl-template.ts";
import { splitSqlStatements } from "../../src/clickhouse/sql-statements.ts";
import { listDdlFiles } from "../../tasks/ddl.ts";

const OUR_FILES = ["00-databases.sql", "05-dic-catalog.sql", "10-stg-tables.sql", "20-ods-tables.sql", "30-ods-views.sql", "90-hits-ingest.sql"];

async function renderAll(version: string): Promise<Map<string, string>> {
  const values = worldTemplateValues({ platform: platformForVersion(version), config: loadStandConfig(), catalogCsv: await readCatalogCsv() });
  const rendered = new Map<string, string>();
  for (const file of OUR_FILES) {
    const text = await readFile(path.join(DDL_DIR, file), "utf8");
    const statements = splitSqlStatements(text).map((s) => renderTemplate(s.text, values, file, s.line));
    rendered.set(file, statements.join(";\n"));
  }
  return rendered;
}

test("the world's files are listed in name order; the hits landing and its views sort last and hold no Kafka reader", async () => {
  const files = await listDdlFiles();
  assert.deepEqual(files, [...files].sort());
  for (const file of OUR_FILES) assert.ok(files.includes(file), `${file} is listed`);
  assert.equal(files.at(-1), "90-hits-ingest.sql", "the hits landing and its views are applied last");
  const ingest = await readFile(path.join(DDL_DIR, "90-hits-ingest.sql"), "utf8");
  for (const other of files.filter((f) => f !== "90-hits-ingest.sql")) {
    const text = await readFile(path.join(DDL_DIR, other), "utf8");
    assert.doesNotMatch(text, /CREATE MATERIALIZED VIEW[^;]*FROM\s+stg\.hits_in\b/i, `${other} must not read the hits landing`);
  }
  const statements = splitSqlStatements(ingest).map((st) => st.firstLine);
  assert.equal(statements[0], "CREATE TABLE IF NOT EXISTS stg.hits_in ON CLUSTER {{cluster}}", "the landing comes first, every view reads it");
  assert.match(ingest, /\)\nENGINE = Null;/, "the landing stores nothing: the views carry each block on");
  assert.match(ingest, /FROM stg\.hits_in;/);
  for (const file of files) {
    const text = await readFile(path.join(DDL_DIR, file), "utf8");
    assert.doesNotMatch(text, /ENGINE\s*=\s*Kafka|_reader_engine|DETACH TABLE|ATTACH TABLE/i, `${file}: the loader ingests, no Kafka engine table`);
  }
});

test("no placeholder sits in a comment (a multi-line value would break out of it)", async () => {
  for (const file of await listDdlFiles()) {
    const text = await readFile(path.join(DDL_DIR, file), "utf8");
    text.split("\n").forEach((line, i) => assert.doesNotMatch(line, /--.*\{\{/, `${file}:${i + 1}`));
  }
});

test("the valid and invalid routes read one stored verdict with literally negated filters", async () => {
  const statements = splitSqlStatements(await readFile(path.join(DDL_DIR, "90-hits-ingest.sql"), "utf8"));
  const where = (view: string): string => {
    const statement = statements.find((s) => s.firstLine.includes(view));
    assert.ok(statement, `${view} exists`);
    return /WHERE\s+([\s\S]+)$/.exec(statement.text)?.[1]?.trim() ?? "";
  };
  const valid = where("ods.event_mv");
  assert.equal(valid, "error_class = ''");
  assert.equal(where("ods.event_errors_mv"), `NOT (${valid})`);
  const landing = statements.find((s) => s.firstLine.includes("stg.hits_raw_mv"));
  assert.match(landing?.text ?? "", /multiIf\([\s\S]*\) AS error_class/, "the verdict is computed once, where rows land in stg");
});

test("18.16 and modern renderings differ exactly in the server-dependent fragments", async () => {
  const old = [...(await renderAll("18.16.1")).values()].join("\n");
  const modern = [...(await renderAll("25.8.1.1")).values()].join("\n");
  const expectations: [RegExp, "old" | "modern"][] = [
    [/_load_ts DateTime64\(3, 'UTC'\)/, "modern"],
    [/now64\(3\) AS _load_ts/, "modern"],
    [/_load_ts DateTime\('UTC'\)/, "old"],
    [/LowCardinality\(String\)/, "modern"],
    [/TTL toDate\(_load_ts\) \+ INTERVAL 3 DAY SETTINGS ttl_only_drop_parts = 1/, "modern"],
    [/FROM stg\.hits_raw_mv\b/, "old"],
    [/FROM stg\.hits_raw\nWHERE error_class = ''/, "modern"],
  ];
  for (const [pattern, where] of expectations) {
    assert.equal(pattern.test(old), where === "old", `18.16 rendering ${where === "old" ? "has" : "lacks"} ${pattern}`);
    assert.equal(pattern.test(modern), where === "modern", `modern rendering ${where === "modern" ? "has" : "lacks"} ${pattern}`);
  }
  // 18.16-only syntax that must not survive into the modern rendering
  for (const oldOnly of [/\bnow\(\) AS _load_ts/, /DEFAULT now\(\)/]) {
    assert.doesNotMatch(modern, oldOnly);
  }
  for (const text of [old, modern]) assert.doesNotMatch(text, /\{\{|\}\}/, "every placeholder rendered");
});

test("the catalog is inlined whole after its INSERT … FORMAT CSVWithNames", async () => {
  const csv = await readCatalogCsv();
  const rendered = (await renderAll("18.16.1")).get("05-dic-catalog.sql") ?? "";
  assert.ok(rendered.includes(`FORMAT CSVWithNames\n${csv}`), "the CSV follows the FORMAT clause unchanged");
});

test("an unknown placeholder is an error naming the file, the line and the placeholder", () => {
  assert.throws(() => renderTemplate("SELECT 1\nFROM {{nope}}", { cluster: "`stand`" }, "99-x.sql", 10), /99-x\.sql:11: unknown placeholder \{\{nope\}\}/);
  assert.throws(() => renderTemplate("SELECT '{{'", {}, "99-x.sql"), /malformed placeholder/);
});

test("the splitter keeps ClickHouse strings and identifiers whole and numbers statements and lines", () => {
  const sql = "-- header\n\nCREATE TABLE a (x String DEFAULT 'a;b') ENGINE = Memory;\n\n-- why\nSELECT 'it\\'s; fine', `we;ird`\nFROM t;\n/* trailing note */\n";
  const statements = splitSqlStatements(sql);
  assert.deepEqual(statements.map((s) => [s.number, s.line, s.firstLine]), [
    [1, 3, "CREATE TABLE a (x String DEFAULT 'a;b') ENGINE = Memory"],
    [2, 6, "SELECT 'it\\'s; fine', `we;ird`"],
  ]);
  assert.equal(statements[1]?.text, "SELECT 'it\\'s; fine', `we;ird`\nFROM t");
});
