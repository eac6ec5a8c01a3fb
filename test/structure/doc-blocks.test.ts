// Every shell block of README.md and docs/*.md says whether it runs (testkit/doc-blocks.ts): `runs`
// (test/docs/doc-commands.test.ts runs it on the test stand) or `illustrative: <why>`. A block that
// says neither, or an illustrative one without a reason, fails here, naming file and line.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { documentationFiles, shellBlocks } from "../../testkit/doc-blocks.ts";

describe("the docs' shell blocks say whether they run", () => {
  const blocks = documentationFiles().flatMap((file) => shellBlocks(file));

  it("every one is `runs` or `illustrative: <reason>`", () => {
    const unmarked = blocks.filter((b) => b.kind === "unmarked").map((b) => `${b.file}:${b.line} (\`\`\`${b.language} …: add "runs" or "illustrative: <why>")`);
    assert.deepEqual(unmarked, []);
    const reasonless = blocks.filter((b) => b.kind === "illustrative" && b.reason.length < 10).map((b) => `${b.file}:${b.line}`);
    assert.deepEqual(reasonless, [], "illustrative blocks say why they are not run");
  });

  it("most of them run, and an `# expect:` sits only in a block that runs", () => {
    assert.ok(blocks.filter((b) => b.kind === "runs").length >= blocks.length / 2, "at least half of the shell blocks run");
    const idle = blocks.filter((b) => b.kind !== "runs" && b.expects.length > 0).map((b) => `${b.file}:${b.line}`);
    assert.deepEqual(idle, []);
  });
});
