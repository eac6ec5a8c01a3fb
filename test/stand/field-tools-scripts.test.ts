// The Kafka tool scripts `stand up` writes (src/addons/field-tools.ts), with no stand: a `java` on PATH
// that prints its arguments shows what each script would run: this stand's --bootstrap-server unless
// the command line names one, the tool's own class, and both jar directories on the class path.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadStandConfig } from "../../src/config/stand.ts";
import { KAFKA_TOOLS, writeFieldTools, type KafkaTool } from "../../src/addons/field-tools.ts";
import { standPaths } from "../../src/services/paths.ts";

describe("the Kafka tool scripts stand up writes", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "field-tools-"));
  const config = { ...loadStandConfig(), state_dir: path.join(dir, "state") };
  const paths = standPaths(config);
  const fakeBin = path.join(dir, "fake-bin");
  let bin = "";

  before(() => {
    bin = writeFieldTools(config, paths).bin;
    execFileSync("mkdir", ["-p", fakeBin]);
    writeFileSync(path.join(fakeBin, "java"), '#!/usr/bin/env bash\nprintf "%s\\n" "$@"\n');
    chmodSync(path.join(fakeBin, "java"), 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The arguments the script hands to java. */
  function javaArgs(tool: string, args: string[]): string[] {
    const out = execFileSync(path.join(bin, tool), args, { env: { PATH: `${fakeBin}:/usr/bin:/bin` }, encoding: "utf8" });
    return out.trimEnd().split("\n");
  }

  it("each runs its own class of Kafka's tools on the broker's and the tools' jars, pointed at this stand's broker", () => {
    const broker = `${config.bind_host}:${config.kafka.port}`;
    for (const [tool, mainClass] of Object.entries(KAFKA_TOOLS) as [KafkaTool, string][]) {
      const args = javaArgs(tool, ["--list"]);
      const at = args.indexOf(mainClass);
      assert.ok(at > 0, `${tool} runs ${mainClass}: ${args.join(" ")}`);
      assert.deepEqual(args.slice(at + 1), ["--bootstrap-server", broker, "--list"], tool);
      assert.equal(args[args.indexOf("-cp") + 1], `${paths.kafka.libs}/*:${paths.kafka.tools}/*`, tool);
    }
  });

  it("a --bootstrap-server on the command line wins (both spellings), and every argument passes unchanged", () => {
    const mainClass = KAFKA_TOOLS["kafka-topics.sh"];
    const tail = (args: string[]) => args.slice(args.indexOf(mainClass) + 1);
    assert.deepEqual(tail(javaArgs("kafka-topics.sh", ["--bootstrap-server", "10.0.0.9:9092", "--describe", "--topic", "a b'c"])), ["--bootstrap-server", "10.0.0.9:9092", "--describe", "--topic", "a b'c"]);
    assert.deepEqual(tail(javaArgs("kafka-topics.sh", ["--bootstrap-server=10.0.0.9:9092", "--list"])), ["--bootstrap-server=10.0.0.9:9092", "--list"]);
  });

  it("each is there under Kafka's name and without .sh; env puts bin/ first on PATH and names kcat's config", () => {
    for (const tool of Object.keys(KAFKA_TOOLS)) assert.equal(readlinkSync(path.join(bin, tool.replace(/\.sh$/, ""))), tool);
    const env = readFileSync(path.join(paths.root, "env"), "utf8");
    const printed = execFileSync("bash", ["-c", `source ${path.join(paths.root, "env")} && printf '%s\\n' "$PATH" "$KCAT_CONFIG"`], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } }).split("\n");
    assert.ok(printed[0]?.startsWith(`${bin}:`), `PATH after source: ${printed[0] ?? ""}\n${env}`);
    assert.match(readFileSync(printed[1] ?? "", "utf8"), new RegExp(`^bootstrap.servers=${config.bind_host}:${config.kafka.port}$`, "m"));
  });
});
