// scripts/launch.mjs, the bundle launcher of our programs: it runs the code as it is now (a changed
// file is built again before the run, never the old bundle), each module sees its own
// import.meta.url and the program sees argv[1] as its entry, and a file that does not compile is
// refused naming its file and line.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";

const dir = mkdtempSync(path.join(tmpdir(), "launch-"));
const entry = path.join(dir, "entry.ts");
const dep = path.join(dir, "dep.ts");
const bundleOf = (file: string): string =>
  path.join(repoRoot, ".build", "launch", `${path.relative(repoRoot, file).replace(/\.ts$/, "").replaceAll(path.sep, "__")}.mjs`);
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(bundleOf(entry), { force: true });
});

function launch(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, launchArgs(entry, ...args), { cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const depSource = (value: string): string => `export const value: string = "${value}";\nexport const url: string = import.meta.url;\n`;

describe("scripts/launch.mjs", () => {
  writeFileSync(entry, 'import { value, url } from "./dep.ts";\nconsole.log(JSON.stringify({ value, url, self: import.meta.url, argv: process.argv.slice(1) }));\n');

  it("runs the entry with its arguments; each module sees its own import.meta.url, the program its entry as argv[1]", () => {
    writeFileSync(dep, depSource("one"));
    const r = launch("--flag", "x");
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { value: string; url: string; self: string; argv: string[] };
    assert.equal(out.value, "one");
    assert.equal(out.url, pathToFileURL(dep).href, "dep.ts's import.meta.url is its own, not the bundle's");
    assert.equal(out.self, pathToFileURL(entry).href);
    assert.deepEqual(out.argv, [entry, "--flag", "x"]);
  });

  it("never runs old code: a file changed since the bundle was built is built again first, even at the same size", () => {
    writeFileSync(dep, depSource("two"));
    assert.equal((JSON.parse(launch().stdout) as { value: string }).value, "two");
    writeFileSync(dep, depSource("tw0")); // same size; only the mtime tells
    const later = new Date(Date.now() + 5000);
    utimesSync(dep, later, later);
    assert.equal((JSON.parse(launch().stdout) as { value: string }).value, "tw0");
  });

  it("refuses a file that does not compile, naming the file and line, and runs nothing", () => {
    writeFileSync(dep, 'export const value: string = "three";\nexport const url = ;\n');
    const r = launch();
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /bundling .*entry\.ts failed/);
    assert.match(r.stderr, /dep\.ts:2: /);
  });
});
