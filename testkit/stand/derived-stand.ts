// Stand contexts derived from the test stand's config file for tests that need the same services
// seen another way: a "second host" (testkit/stand/second-host.ts: its own state directory and ports) or
// a pool of loaders or runners on the test stand itself (the same state and ports, loader.instances
// or runner.instances raised). The derived config is written as a file, because the processes
// started from such a context read it (STAND_CONFIG is handed to them: src/services/node-service.ts).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import { parseStandConfig, repoRoot, standConfigPath } from "../../src/config/index.ts";
import { standPaths, type StandContext, Supervisor } from "../../src/services/index.ts";

export type RawStandConfig = Record<string, Record<string, unknown>> & { state_dir: string };

/** The stand config in force, changed by `change`, written to `<its state_dir>/<fileName>`, and a context on it. */
export function derivedStandContext(fileName: string, change: (raw: RawStandConfig) => Record<string, unknown>, print: (line: string) => void): StandContext {
  const raw = parse(readFileSync(standConfigPath(), "utf8")) as RawStandConfig;
  const config = change(raw);
  const dir = path.resolve(repoRoot, String(config.state_dir));
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, fileName);
  const text = `# written by a test harness (testkit/stand/derived-stand.ts) from ${path.relative(repoRoot, standConfigPath())}\n${stringify(config)}`;
  writeFileSync(file, text);
  const parsed = parseStandConfig(text, file);
  const paths = standPaths(parsed);
  return { config: parsed, paths, supervisor: new Supervisor(paths.pids), print, configFile: file };
}

/** The test stand with `loader.instances` and `runner.instances` raised: the same services, state and first ports. */
export function poolStandContext(instances: { runner?: number; loader?: number }, print: (line: string) => void = () => undefined): StandContext {
  return derivedStandContext(
    "stand.pool.yaml",
    (raw) => ({
      ...raw,
      runner: { ...raw.runner, instances: instances.runner ?? 1 },
      loader: { ...raw.loader, instances: instances.loader ?? 1 },
    }),
    print,
  );
}
