// Where each stand service keeps its data, config, log and pid file, all under the state dir.
// One place for the layout so `clean`, the docs and the supervisor agree.
import path from "node:path";
import { loadStandConfig, stateDir, type StandConfig } from "../config/index.ts";

export interface StandPaths {
  root: string;
  pids: string;
  postgres: { dir: string; data: string; log: string };
  zookeeper: { dir: string; data: string; config: string; log: string };
  clickhouse: { dir: string; users: string; node(name: string): ClickHouseNodePaths };
  kafka: { dir: string; libs: string; tools: string; data: string; config: string; log4j: string; log: string; serverLog: string; clusterId: string };
}

export interface ClickHouseNodePaths {
  dir: string;
  data: string;
  config: string;
  log: string;
  serverLog: string;
  errorLog: string;
}

export function standPaths(config: StandConfig = loadStandConfig()): StandPaths {
  const root = stateDir(config);
  const pg = path.join(root, "postgres");
  const zk = path.join(root, "zookeeper");
  const ch = path.join(root, "clickhouse");
  const kafka = path.join(root, "kafka");
  return {
    root,
    pids: path.join(root, "pids"),
    postgres: { dir: pg, data: path.join(pg, "data"), log: path.join(pg, "log") },
    zookeeper: { dir: zk, data: path.join(zk, "data"), config: path.join(zk, "zoo.cfg"), log: path.join(zk, "log") },
    clickhouse: {
      dir: ch,
      users: path.join(ch, "users.xml"),
      node(name: string): ClickHouseNodePaths {
        const dir = path.join(ch, name);
        return {
          dir,
          data: path.join(dir, "data") + "/",
          config: path.join(dir, "config.xml"),
          log: path.join(dir, "log"),
          serverLog: path.join(dir, "server.log"),
          errorLog: path.join(dir, "server.err.log"),
        };
      },
    },
    kafka: {
      dir: kafka,
      libs: path.join(kafka, "libs"),
      // Kafka's command-line tools' jars beside the broker's (src/addons/field-tools.ts)
      tools: path.join(kafka, "tools"),
      data: path.join(kafka, "data"),
      config: path.join(kafka, "server.properties"),
      log4j: path.join(kafka, "log4j2.yaml"),
      log: path.join(kafka, "log"),
      serverLog: path.join(kafka, "server.log"),
      clusterId: path.join(kafka, "cluster-id"),
    },
  };
}
