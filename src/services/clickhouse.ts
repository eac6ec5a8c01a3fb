// The two ClickHouse 18.16 servers of the stand (2 shards x 1 replica), from Debian's package.
// Each node gets its own generated config.xml; both read the one generated users file.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { clickhouseHttpUrl, type ClickHouseNodeConfig } from "../config/index.ts";
import { connectClickHouse } from "../clickhouse/index.ts";
import { renderNodeConfig, renderUsersXml } from "./clickhouse-config.ts";
import type { ServiceDefinition, StandContext } from "./service.ts";

/** Health: the server answers the `default` account and holds a live ZooKeeper session. */
async function probeNode(ctx: StandContext, node: ClickHouseNodeConfig): Promise<boolean> {
  const ch = connectClickHouse({ config: ctx.config, node: node.name, account: "default", requestTimeoutMs: 3000 });
  try {
    const rows = await ch.query<{ n: string }>("SELECT count() AS n FROM system.zookeeper WHERE path = '/'");
    return Number(rows[0]?.n ?? 0) > 0;
  } finally {
    await ch.close();
  }
}

/** Liveness: GET /ping answers "Ok." (no ZooKeeper needed: a node without it still serves reads). */
async function pingNode(ctx: StandContext, node: ClickHouseNodeConfig): Promise<boolean> {
  const response = await fetch(`${clickhouseHttpUrl(node, ctx.config)}/ping`, { signal: AbortSignal.timeout(3000) });
  return response.ok && (await response.text()).trim() === "Ok.";
}

function writeConfigs(ctx: StandContext, node: ClickHouseNodeConfig): void {
  const nodePaths = ctx.paths.clickhouse.node(node.name);
  mkdirSync(nodePaths.data, { recursive: true });
  mkdirSync(path.join(ctx.paths.clickhouse.dir, "dictionaries"), { recursive: true });
  writeFileSync(ctx.paths.clickhouse.users, renderUsersXml(ctx.config), { mode: 0o600 });
  writeFileSync(nodePaths.config, renderNodeConfig(ctx.config, ctx.paths, node), { mode: 0o600 });
}

export function clickhouseNodeService(ctx: StandContext, node: ClickHouseNodeConfig): ServiceDefinition {
  const nodePaths = ctx.paths.clickhouse.node(node.name);
  const name = `clickhouse-${node.name}`;
  return {
    name,
    port: node.http_port,
    stopSignal: "SIGTERM",
    stopGraceMs: 30_000,
    logFiles: [nodePaths.log, nodePaths.errorLog],
    needs: ["zookeeper"],
    healthWhat: `SELECT from system.zookeeper as 'default' on http://${ctx.config.bind_host}:${node.http_port}`,
    hint:
      `read ${nodePaths.errorLog} and ${nodePaths.serverLog}; ports ${node.http_port}/${node.tcp_port}/${node.interserver_port} must be free; ` +
      `ZooKeeper must be healthy (node status); a config error is printed near the top of ${nodePaths.log}`,
    prepare(c) {
      writeConfigs(c, node);
      return Promise.resolve();
    },
    launch() {
      return {
        service: name,
        command: "clickhouse-server",
        args: [`--config-file=${nodePaths.config}`], // the config path is the marker that proves the pid is ours
        logFile: nodePaths.log,
        marker: nodePaths.config,
        cwd: nodePaths.dir,
      };
    },
    probe: (c) => probeNode(c, node),
    alive: (c) => pingNode(c, node),
  };
}
