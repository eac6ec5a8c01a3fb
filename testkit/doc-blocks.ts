// The shell blocks of README.md and docs/*.md. Each says, after its language, whether it runs:
//   ```sh runs                       — test/docs/doc-commands.test.ts runs it on the test stand
//   ```sh illustrative: <why not>    — never run; the reason is required
// A runnable block may say what its output must hold: a line `# expect: <text>` after a command
// means the output of the block so far contains <text>. The blocks of one file run in order in one
// shell, so a block may use what an earlier one set (API, TOKEN, RUN_ID).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../src/config/index.ts";

export const SHELL_LANGUAGES = ["sh", "bash", "shell", "console"] as const;

export interface DocBlock {
  /** Relative to the repository root, e.g. docs/api.md. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  kind: "runs" | "illustrative" | "unmarked";
  /** Why an illustrative block is not run ("" when it gives none). */
  reason: string;
  body: string;
  /** The `# expect:` texts, in order. */
  expects: string[];
}

/** README.md and every docs/*.md, relative to the repository root. */
export function documentationFiles(): string[] {
  const docs = readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

/** Every shell block of a markdown file (fences of ``` only, as these docs use). */
export function shellBlocks(file: string): DocBlock[] {
  const lines = readFileSync(path.join(repoRoot, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)\s*(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const language = open[1] ?? "";
    const info = (open[2] ?? "").trim();
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "");
    if (!(SHELL_LANGUAGES as readonly string[]).includes(language)) continue;
    const illustrative = /^illustrative\b:?\s*(.*)$/.exec(info);
    blocks.push({
      file,
      line: start + 1,
      language,
      kind: info === "runs" ? "runs" : illustrative ? "illustrative" : "unmarked",
      reason: illustrative?.[1]?.trim() ?? "",
      body: body.join("\n"),
      expects: body.flatMap((l) => {
        const expect = /^\s*# expect: (.+)$/.exec(l);
        return expect?.[1] ? [expect[1]] : [];
      }),
    });
  }
  return blocks;
}
