// A stand config moved aside: every `*port` key shifted by one offset and a state directory of its
// own. scripts/test-lanes.ts writes the second test stand this way (the test stand's ports + 100,
// .stand-test-b), and scripts/classify-tests.ts its dead stands (ports nothing listens on).
import { readFileSync } from "node:fs";
import { parse, stringify } from "yaml";

function shiftPorts(value: unknown, offset: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shiftPorts(v, offset));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, /port$/.test(k) && typeof v === "number" ? v + offset : shiftPorts(v, offset)]));
  }
  return value;
}

/** The YAML text of `sourceFile` with every port + `offset` and `state_dir` replaced. */
export function shiftedStandConfigText(sourceFile: string, offset: number, stateDir: string, note: string): string {
  const config = parse(readFileSync(sourceFile, "utf8")) as Record<string, unknown>;
  const shifted = { ...(shiftPorts(config, offset) as Record<string, unknown>), state_dir: stateDir };
  return `# ${note}\n${stringify(shifted)}`;
}
