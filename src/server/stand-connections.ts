// The stand's own services as Airflow connections, from the stand config: what GET
// /api/v2/connections lists read-only beside the stored ones (ids stand_*). Their passwords are the
// config's; the API masks them in every read, and a connection test of one uses them.
import { kafkaBroker, type StandConfig } from "../config/index.ts";
import type { ConnectionFields } from "../runner/index.ts";

export function standConnections(config: StandConfig): ConnectionFields[] {
  const hostOf = (host: string | undefined) => host ?? config.bind_host;
  const pg = config.postgres;
  const postgres = (connectionId: string, database: string, description: string): ConnectionFields => ({
    connectionId, connType: "postgres", description, host: hostOf(pg.host), login: pg.user, schema: database, port: pg.port, password: pg.password, extra: null,
  });
  const { cluster, accounts } = config.clickhouse;
  return [
    postgres("stand_postgres", pg.database, `The stand's Postgres, database ${pg.database} (read-only: from the stand config)`),
    postgres("stand_runner_db", pg.runner_database, `The runner's metadata database on the stand's Postgres: runs, tries, variables, connections (read-only: from the stand config)`),
    ...config.clickhouse.nodes.map((node): ConnectionFields => ({
      connectionId: `stand_clickhouse_${node.name}`,
      connType: "clickhouse",
      description: `ClickHouse node ${node.name}, shard ${node.shard} of cluster ${cluster}, over HTTP as the admin account (read-only: from the stand config)`,
      host: hostOf(node.host),
      login: accounts.admin.user,
      schema: "default",
      port: node.http_port,
      password: accounts.admin.password,
      extra: JSON.stringify({ protocol: "http", tcp_port: node.tcp_port, cluster, shard: node.shard }),
    })),
    {
      connectionId: "stand_kafka",
      connType: "kafka",
      description: "The stand's Kafka broker, where the generator writes the hits the loader reads (read-only: from the stand config)",
      host: hostOf(config.kafka.host),
      login: null,
      schema: null,
      port: config.kafka.port,
      password: null,
      extra: JSON.stringify({ "bootstrap.servers": kafkaBroker(config) }),
    },
    {
      connectionId: "stand_zookeeper",
      connType: "zookeeper",
      description: "The stand's ZooKeeper: ClickHouse's replication and ON CLUSTER DDL (read-only: from the stand config)",
      host: hostOf(config.zookeeper.host),
      login: null,
      schema: null,
      port: config.zookeeper.port,
      password: null,
      extra: null,
    },
  ];
}
