// The KRaft log dir's cluster id: drawn never to begin with '-', and passed so that one which does
// (an id file kept from an older stand) still formats. The format runs the stand's own Kafka jars
// on a temporary directory, never on a stand's data.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { randomKafkaClusterId, storageFormatArgs } from "../../src/services/kafka.ts";
import { standContext } from "../../src/stand/stand.ts";

const execFileAsync = promisify(execFile);

describe("the Kafka cluster id", () => {
  it("is 16 random bytes in URL-safe base64 and never begins with '-' (20,000 draws)", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = randomKafkaClusterId();
      assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      assert.equal(Buffer.from(id, "base64url").length, 16);
      seen.add(id);
    }
    assert.equal(seen.size, 20_000);
  });

  it("an id that begins with '-' still formats a KRaft log dir with the stand's jars", async () => {
    const libs = standContext(() => undefined).paths.kafka.libs;
    const dir = mkdtempSync(path.join(tmpdir(), "kafka-format-"));
    try {
      const config = path.join(dir, "server.properties");
      writeFileSync(
        config,
        [
          "process.roles=broker,controller",
          "node.id=1",
          "controller.quorum.voters=1@127.0.0.1:1",
          "listeners=PLAINTEXT://127.0.0.1:2,CONTROLLER://127.0.0.1:1",
          "controller.listener.names=CONTROLLER",
          `log.dirs=${path.join(dir, "data")}`,
        ].join("\n"),
      );
      const id = "-8aC6n02QBq_ZNRnMQbHjQ"; // the id a CI rehearsal drew
      await execFileAsync("java", ["-cp", `${libs}/*`, ...storageFormatArgs(id, config)]);
      assert.match(readFileSync(path.join(dir, "data", "meta.properties"), "utf8"), /^cluster\.id=-8aC6n02QBq_ZNRnMQbHjQ$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
