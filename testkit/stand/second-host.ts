// A "second host" on this machine (docs/deploy.md): the test stand's Postgres, Kafka and ClickHouse,
// reached at their addresses as another machine would reach them, with a state directory and ports
// of its own and no services of its own. A runner started for it is a second runner of the pool: the
// same metadata database, its own API port, its own pid file and log (.stand-test-host2/runner/).
import { derivedStandContext } from "./derived-stand.ts";
import type { StandContext } from "../../src/services/index.ts";

/** Its runner's API port and its loader's port: the test stand's + 4 (clear of the test stand's own
 * second instances at + 1, testkit/stand/derived-stand.ts poolStandContext). */
const PORT_SHIFT = 4;

export function secondHostContext(print: (line: string) => void = () => undefined): StandContext {
  return derivedStandContext(
    "stand.second-host.yaml",
    (raw) => {
      const config: Record<string, unknown> = {
        ...raw,
        state_dir: `${raw.state_dir}-host2`,
        runner: { ...raw.runner, api_port: Number(raw.runner?.api_port) + PORT_SHIFT },
        loader: { ...raw.loader, port: Number(raw.loader?.port) + PORT_SHIFT },
      };
      // the services are the first host's: this host starts no keeper, Prometheus or Superset
      delete config.keeper;
      delete config.prometheus;
      delete config.bi;
      return config;
    },
    print,
  );
}
