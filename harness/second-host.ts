// A "second host" on this machine (docs/deploy.md): the test stand's Postgres, Kafka and ClickHouse,
// reached at their addresses as another machine would reach them, with a state directory and ports
// of its own and no services of its own. A runner started for it is a second runner of the pool: the
// same metadata database, its own API port, its own pid file and log (.stand-test-host2/runner/).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import { parseStandConfig, repoRoot, standConfigPath } from "../src/config/stand.ts";
import { standPaths } from "../src/stand/paths.ts";
import type { StandContext } from "../src/stand/service.ts";
import { Supervisor } from "../src/stand/supervisor.ts";

/** Its runner's API port: the test stand's + 1. */
const PORT_SHIFT = 1;

export function secondHostContext(print: (line: string) => void = () => undefined): StandContext {
  const raw = parse(readFileSync(standConfigPath(), "utf8")) as Record<string, Record<string, unknown>> & { state_dir: string };
  const runner = raw.runner ?? {};
  const loader = raw.loader ?? {};
  const config: Record<string, unknown> = {
    ...raw,
    state_dir: `${raw.state_dir}-host2`,
    runner: { ...runner, api_port: Number(runner.api_port) + PORT_SHIFT },
    loader: { ...loader, port: Number(loader.port) + PORT_SHIFT },
  };
  // the services are the first host's: this host starts no keeper, Prometheus or Superset
  delete config.keeper;
  delete config.prometheus;
  delete config.bi;
  const dir = path.resolve(repoRoot, `${raw.state_dir}-host2`);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "stand.second-host.yaml");
  const text = `# written by harness/second-host.ts from ${path.relative(repoRoot, standConfigPath())}\n${stringify(config)}`;
  writeFileSync(file, text);
  const parsed = parseStandConfig(text, file);
  const paths = standPaths(parsed);
  return { config: parsed, paths, supervisor: new Supervisor(paths.pids), print, configFile: file };
}
