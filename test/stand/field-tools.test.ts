// The field's own tools on the test stand, as a mentee types them after `source <state_dir>/env`:
// Kafka's kafka-topics, console producer and consumer, get-offsets, consumer-groups and configs (the
// release the stand runs, jars from Maven Central), kcat (Debian), and the make targets ch, psql and
// kafka-lag. They work on a topic and a group of this test's own; the world's are only read.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "../../src/config/stand.ts";
import { fetchedToolsVersion, fieldToolPaths } from "../../src/addons/field-tools.ts";
import { standContext } from "../../src/stand/stand.ts";
import { randomName } from "../../testkit/stand/live-stand.ts";

const run = promisify(execFile);
const ctx = standContext(() => undefined);
const tools = fieldToolPaths(ctx.paths);
const topic = randomName("tools_probe");
const group = randomName("tools_probe_group");

/** A shell line after `source env`, as a user types it; stdout and stderr, or the failure with both. */
async function shell(line: string, input?: string): Promise<{ stdout: string; stderr: string }> {
  const script = input === undefined ? line : `${line} <<'EOF'\n${input}\nEOF`;
  try {
    return await run("bash", ["-c", `set -euo pipefail; source '${tools.env}'; ${script}`], { cwd: repoRoot, timeout: 120_000 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${line}: ${e.message}\nstdout: ${e.stdout ?? ""}\nstderr: ${e.stderr ?? ""}`, { cause: err });
  }
}

describe("the field's tools on the test stand: Kafka's own scripts, kcat, and make ch, psql, kafka-lag", () => {
  before(() => {
    assert.equal(fetchedToolsVersion(ctx.paths), ctx.config.kafka.version, `Kafka's tools' jars for ${ctx.config.kafka.version} in ${ctx.paths.kafka.tools}`);
  });

  after(async () => {
    await shell(`kafka-topics.sh --delete --if-exists --topic ${topic}`).catch((err: unknown) => console.log(String(err)));
  });

  it("kafka-topics.sh creates, lists and describes a topic on the stand's broker, no --bootstrap-server typed", async () => {
    await shell(`kafka-topics.sh --create --topic ${topic} --partitions 2 --replication-factor 1`);
    const listed = (await shell("kafka-topics.sh --list")).stdout.split("\n");
    assert.ok(listed.includes(topic), listed.join(", "));
    const described = (await shell(`kafka-topics --describe --topic ${topic}`)).stdout;
    assert.match(described, new RegExp(`Topic: ${topic}\\s.*PartitionCount: 2`));
  });

  it("kafka-console-producer.sh puts three lines in; kafka-console-consumer.sh reads the same three from the beginning", async () => {
    await shell(`kafka-console-producer.sh --topic ${topic} --property parse.key=true --property key.separator=:`, "k1:one\nk1:two\nk1:three");
    const consumed = await shell(`kafka-console-consumer.sh --topic ${topic} --group ${group} --from-beginning --max-messages 3 --timeout-ms 60000`);
    assert.deepEqual(consumed.stdout.trim().split("\n"), ["one", "two", "three"], consumed.stderr);
  });

  it("kafka-get-offsets.sh and kafka-consumer-groups.sh: end offsets sum to 3, and the console consumer's group has lag 0", async () => {
    const offsets = (await shell(`kafka-get-offsets.sh --topic ${topic}`)).stdout.trim().split("\n");
    const ends = offsets.map((l) => Number(l.split(":")[2]));
    assert.equal(ends.reduce((a, b) => a + b, 0), 3, offsets.join("\n"));
    const described = (await shell(`kafka-consumer-groups.sh --describe --group ${group}`)).stdout;
    const rows = described.split("\n").filter((l) => l.startsWith(`${group} `));
    assert.equal(rows.length, 2, described);
    for (const row of rows) assert.equal(row.trim().split(/\s+/)[5], "0", `LAG of ${row}`);
  });

  it("kafka-configs.sh describes the topic's config; kcat -L (through KCAT_CONFIG) sees the topic with its 2 partitions", async () => {
    await shell(`kafka-configs.sh --alter --entity-type topics --entity-name ${topic} --add-config retention.ms=3600000`);
    const described = (await shell(`kafka-configs.sh --describe --entity-type topics --entity-name ${topic}`)).stdout;
    assert.match(described, /retention\.ms=3600000/);
    const listed = (await shell(`kcat -L -t ${topic}`)).stdout;
    assert.match(listed, new RegExp(`topic "${topic}" with 2 partitions`));
  });

  it("make ch, make psql and make kafka-lag answer from this stand; a node that is not there is named", async () => {
    const make = (args: string[]) => run("make", ["--no-print-directory", ...args], { cwd: repoRoot, timeout: 120_000 });
    const ch2 = await make(["ch", "ACCOUNT=reader", "NODE=ch2", "Q=SELECT substitution FROM system.macros WHERE macro = 'replica'"]);
    assert.equal(ch2.stdout.trim(), "ch2");
    // 18.16 has no currentUser(): the query finds itself among the running ones, with its user
    const admin = await make(["ch", "ACCOUNT=admin", "Q=SELECT user FROM system.processes WHERE query LIKE '%make-ch-probe%'"]);
    assert.equal(admin.stdout.trim(), ctx.config.clickhouse.accounts.admin.user);
    const psql = await make(["psql", "DB=runner", "C=select current_database()"]);
    assert.match(psql.stdout, new RegExp(`^\\s*${ctx.config.postgres.runner_database}\\s*$`, "m"));
    const lag = await make(["kafka-lag"]);
    assert.ok(lag.stdout.split("\n").some((l) => l.startsWith(`${group} `) && l.includes(topic)), lag.stdout);
    const wrong = await make(["ch", "NODE=ch9", "Q=SELECT 1"]).then(
      () => undefined,
      (err: unknown) => err as { stderr: string },
    );
    assert.ok(wrong, "make ch NODE=ch9 fails");
    assert.match(wrong.stderr, /--node \(NODE=\): no ClickHouse node named 'ch9'.*ch1, ch2/);
  });

  it("the scripts are Kafka's own, of the version the stand runs", async () => {
    const version = (await shell("kafka-topics.sh --version")).stdout;
    assert.match(version, new RegExp(`^${ctx.config.kafka.version.replace(/\./g, "\\.")}\\b`, "m"));
    assert.equal(path.dirname((await shell("command -v kafka-topics.sh")).stdout.trim()), tools.bin);
  });
});
