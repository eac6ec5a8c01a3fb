// The Docker launcher's config, checked without starting anything: docker-compose.yml holds only
// long-lived, health-checked services bound to 127.0.0.1 on stand.yaml's ports; the ClickHouse
// XML it mounts declares the cluster, macros, keeper, DDL queue and the four accounts; the runner
// image and its stand config agree with all of it, and the loader runs that image with the same config.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { MIN_OPEN_TOKEN_LENGTH } from "../../src/api/auth.ts";
import { repoRoot } from "../../src/config/stand.ts";
import { LOADER_ENTRY } from "../../src/services/loader-service.ts";
import { renderRules } from "../../src/addons/prometheus.ts";
import {
  bindSourcePath,
  dockerfileInstructions,
  environment,
  healthcheckCommand,
  ignoreEntries,
  keyPaths,
  loadCompose,
  loadStandYaml,
  parseImage,
  parsePort,
  parseVolume,
  runnerStandConfigPath,
  service,
  type ComposeService,
} from "../../testkit/stand/compose-files.ts";
import {
  clusters,
  declaredUsers,
  grantsOf,
  readAccountsXml,
  readKeeperXml,
  readNodeXml,
  readServerXml,
  removedUsers,
  xmlRootKeys,
} from "../../testkit/stand/clickhouse-xml.ts";

const { raw, compose } = loadCompose();
const stand = loadStandYaml(path.join(repoRoot, "stand.yaml"));

const KEEPER = "clickhouse-keeper";
const CH_NODES = ["clickhouse-01", "clickhouse-02"] as const;
const EXPECTED_SERVICES = [KEEPER, ...CH_NODES, "kafka", "postgres", "loader", "runner", "prometheus"];
const APP_DATABASES = ["stg", "ods", "dds", "dm", "dic"];
const DDL_QUEUE = "/clickhouse/task_queue/ddl";
/** depends_on entries allowed to wait for service_started only, with the reason. None today. */
const STARTED_IS_ENOUGH: Record<string, string> = {};

const services = Object.entries(compose.services);
const mounts = (svc: ComposeService) => (svc.volumes ?? []).map(parseVolume);
const ports = (svc: ComposeService) => (svc.ports ?? []).map((p) => ({ spec: p, mapping: parsePort(p) }));

/** The XML file mounted into a ClickHouse container at the given path. */
function mountedFile(name: string, target: string): string {
  const mount = mounts(service(compose, name)).find((m) => m.target === target);
  assert.ok(mount?.bind, `${name} mounts nothing from the repository at ${target}`);
  return bindSourcePath(mount);
}
const serverXmlOf = (name: string) => readServerXml(mountedFile(name, "/etc/clickhouse-server/config.d/stand-server.xml"));
const nodeXmlOf = (name: string) => readNodeXml(mountedFile(name, "/etc/clickhouse-server/config.d/stand-node.xml"));
const accountsOf = (name: string) => readAccountsXml(mountedFile(name, "/etc/clickhouse-server/users.d/stand-accounts.xml"));
/** stand.yaml's node for a compose ClickHouse service: clickhouse-0N is shard N. */
function standNode(name: string) {
  const shard = CH_NODES.indexOf(name as (typeof CH_NODES)[number]) + 1;
  const node = stand.clickhouse.nodes.find((n) => n.shard === shard);
  assert.ok(node, `stand.yaml has no node for shard ${shard} (${name})`);
  return node;
}

void describe("docker-compose.yml: services", () => {
  void test("holds exactly the expected long-lived services", () => {
    assert.deepEqual(Object.keys(compose.services).sort(), [...EXPECTED_SERVICES].sort());
  });

  void test("no one-shot init service: names, restart policy, profiles", () => {
    const initLike = Object.keys(compose.services).filter((n) => /init|setup|bootstrap|migrate/i.test(n));
    assert.deepEqual(initLike, [], "services named like one-shot jobs");
    const notRestarting = services.filter(([, s]) => s.restart !== "always" && s.restart !== "unless-stopped");
    assert.deepEqual(notRestarting.map(([n, s]) => `${n}: restart ${s.restart ?? "(unset)"}`), []);
    assert.deepEqual(keyPaths(raw).filter((p) => /(^|\.)profiles$/.test(p)), [], "profiles keys");
  });

  void test("every service has a healthcheck that is not disabled", () => {
    const missing = services.filter(([, s]) => {
      const hc = s.healthcheck;
      const cmd = healthcheckCommand(s).trim().toUpperCase();
      return !hc || hc.disable === true || cmd === "" || cmd === "NONE";
    });
    assert.deepEqual(missing.map(([n]) => n), [], "services without a working healthcheck");
  });

  void test("every depends_on waits for service_healthy", () => {
    const bad = services.flatMap(([name, s]) =>
      Object.entries(s.depends_on ?? {})
        .filter(([dep, d]) => d.condition !== "service_healthy" && !(d.condition === "service_started" && STARTED_IS_ENOUGH[`${name}->${dep}`]))
        .map(([dep, d]) => `${name} -> ${dep}: ${d.condition}`),
    );
    assert.deepEqual(bad, []);
    const unknown = services.flatMap(([name, s]) => Object.keys(s.depends_on ?? {}).filter((d) => !compose.services[d]).map((d) => `${name} -> ${d}`));
    assert.deepEqual(unknown, [], "depends_on names a service that does not exist");
  });

  void test("ClickHouse nodes wait for the keeper; the loader waits for the stores; the runner waits for everything but Prometheus, which waits for nothing", () => {
    for (const name of CH_NODES) assert.ok(service(compose, name).depends_on?.[KEEPER], `${name} must depend on ${KEEPER}`);
    // Prometheus scrapes whoever answers and shows the rest as down: nothing waits for it, it waits for nothing
    assert.equal(service(compose, "prometheus").depends_on, undefined);
    const others = EXPECTED_SERVICES.filter((n) => n !== "runner" && n !== "prometheus").sort();
    assert.deepEqual(Object.keys(service(compose, "runner").depends_on ?? {}).sort(), others);
    const stores = others.filter((n) => n !== "loader");
    assert.deepEqual(Object.keys(service(compose, "loader").depends_on ?? {}).sort(), stores);
  });

  void test("named volumes are declared and every service is on the stand network", () => {
    const named = services.flatMap(([, s]) => mounts(s).filter((m) => !m.bind).map((m) => m.source));
    assert.deepEqual(named.filter((v) => !(v in compose.volumes)), [], "volumes used but not declared");
    assert.ok(named.length >= 5, "keeper, both ClickHouse nodes, Kafka and Postgres keep their data on named volumes");
    const offNetwork = services.filter(([, s]) => !(s.networks ?? []).includes("stand"));
    assert.deepEqual(offNetwork.map(([n]) => n), []);
  });

  void test("every file mounted from the repository exists", () => {
    const missing = services.flatMap(([n, s]) =>
      mounts(s)
        .filter((m) => m.bind && m.source.startsWith("."))
        .filter((m) => !existsSync(bindSourcePath(m)))
        .map((m) => `${n}: ${m.source}`),
    );
    assert.deepEqual(missing, []);
  });
});

void describe("docker-compose.yml: ports and images", () => {
  const expectedPublished: Record<string, number[]> = {
    [KEEPER]: [],
    "clickhouse-01": [standNode("clickhouse-01").http_port, standNode("clickhouse-01").tcp_port],
    "clickhouse-02": [standNode("clickhouse-02").http_port, standNode("clickhouse-02").tcp_port],
    kafka: [stand.kafka.port],
    postgres: [stand.postgres.port],
    runner: [stand.runner.api_port],
    loader: [stand.loader.port],
    prometheus: stand.prometheus ? [stand.prometheus.port] : [],
  };

  void test("published ports bind 127.0.0.1 in the explicit ip:published:target form", () => {
    const bad = services.flatMap(([n, s]) => ports(s).filter((p) => p.mapping?.hostIp !== "127.0.0.1").map((p) => `${n}: ${p.spec}`));
    assert.deepEqual(bad, []);
  });

  void test("published ports are stand.yaml's ports", () => {
    for (const [name, expected] of Object.entries(expectedPublished)) {
      const published = ports(service(compose, name)).map((p) => p.mapping?.published);
      assert.deepEqual(published.sort(), [...expected].sort(), `${name} publishes ${published.join(", ") || "nothing"}`);
    }
  });

  void test("the runner and the loader run as pools: replicas, a host port per replica, no fixed hostname, every replica scraped", () => {
    for (const name of ["runner", "loader"]) {
      const svc = service(compose, name);
      const replicas = svc.deploy?.replicas ?? 1;
      assert.ok(replicas >= 2, `${name} runs ${replicas} replica(s)`);
      assert.deepEqual(ports(svc).map((p) => p.mapping?.publishedCount), [replicas], `${name} publishes one host port per replica`);
      // a fixed hostname would give every replica the same loader.status key (name@host:port)
      assert.equal(svc.hostname, undefined, `${name} has no fixed hostname`);
    }
    // Prometheus scrapes each replica: "prometheus: the stand's rules" below
  });

  void test("containers listen on the published number (Kafka: on its EXTERNAL listener)", () => {
    for (const name of [...CH_NODES, "postgres", "runner", "loader", "prometheus"]) {
      const wrong = ports(service(compose, name)).filter((p) => p.mapping?.target !== p.mapping?.published);
      assert.deepEqual(wrong.map((p) => p.spec), [], `${name}: container port differs from the stand port`);
    }
    assert.equal(environment(service(compose, "postgres")).PGPORT, String(stand.postgres.port));
    const kafkaEnv = environment(service(compose, "kafka"));
    const external = /EXTERNAL:\/\/[^:,]*:(\d+)/.exec(kafkaEnv.KAFKA_LISTENERS ?? "")?.[1];
    assert.deepEqual(ports(service(compose, "kafka")).map((p) => p.mapping?.target), [Number(external)]);
  });

  void test("each healthcheck probes its own service's port", () => {
    const probes: Record<string, number> = {
      [KEEPER]: stand.zookeeper.port,
      "clickhouse-01": standNode("clickhouse-01").http_port,
      "clickhouse-02": standNode("clickhouse-02").http_port,
      kafka: stand.kafka.port,
      postgres: stand.postgres.port,
      runner: stand.runner.api_port,
      loader: stand.loader.port,
    };
    for (const [name, port] of Object.entries(probes)) {
      const cmd = healthcheckCommand(service(compose, name));
      assert.match(cmd, new RegExp(`\\b${port}\\b`), `${name} healthcheck does not probe port ${port}: ${cmd}`);
    }
    assert.match(healthcheckCommand(service(compose, "runner")), /\/api\/v2\/monitor\/health/);
    assert.match(healthcheckCommand(service(compose, "loader")), /:\d+\/health\b/);
  });

  void test("ClickHouse server and keeper share one pinned version", () => {
    const images = [KEEPER, ...CH_NODES].map((n) => parseImage(service(compose, n).image));
    assert.equal(images[0]?.repository, "clickhouse/clickhouse-keeper");
    for (const img of images.slice(1)) assert.equal(img.repository, "clickhouse/clickhouse-server");
    assert.equal(new Set(images.map((i) => i.tag)).size, 1, `tags differ: ${images.map((i) => i.tag).join(", ")}`);
    assert.match(images[0]?.tag ?? "", /^(2[4-9]|[3-9]\d)\.\d+(\.\d+)*$/, "a modern, pinned ClickHouse version (not latest)");
  });

  void test("Kafka is apache/kafka 4.x, the version stand.yaml names", () => {
    const img = parseImage(service(compose, "kafka").image);
    assert.equal(img.repository, "apache/kafka");
    assert.match(img.tag, /^4\.\d+\.\d+$/);
    assert.equal(img.tag, stand.kafka.version);
  });

  void test("Postgres is postgres:16", () => {
    const img = parseImage(service(compose, "postgres").image);
    assert.equal(img.repository, "postgres");
    assert.match(img.tag, /^16(\.\d+)?(-[a-z0-9]+)?$/);
  });
});

void describe("Kafka and Postgres settings", () => {
  const kafka = environment(service(compose, "kafka"));

  void test("Kafka: single KRaft node, no topic auto-creation", () => {
    assert.equal(kafka.KAFKA_AUTO_CREATE_TOPICS_ENABLE, "false");
    assert.deepEqual((kafka.KAFKA_PROCESS_ROLES ?? "").split(",").sort(), ["broker", "controller"]);
    assert.equal(kafka.KAFKA_ZOOKEEPER_CONNECT, undefined);
    assert.ok(kafka.CLUSTER_ID, "KRaft storage needs a fixed CLUSTER_ID");
    assert.match(kafka.KAFKA_LISTENERS ?? "", new RegExp(`CONTROLLER://[^,]*:${stand.kafka.controller_port}\\b`));
  });

  void test("Kafka advertises kafka:<port> inside and 127.0.0.1:<port> to the host", () => {
    const advertised = kafka.KAFKA_ADVERTISED_LISTENERS ?? "";
    assert.match(advertised, new RegExp(`INTERNAL://kafka:${stand.kafka.port}\\b`));
    assert.match(advertised, new RegExp(`EXTERNAL://127\\.0\\.0\\.1:${stand.kafka.port}\\b`));
  });

  void test("Postgres: the account and databases of the stand config", () => {
    const pg = environment(service(compose, "postgres"));
    assert.equal(pg.POSTGRES_USER, stand.postgres.user);
    assert.equal(pg.POSTGRES_PASSWORD, stand.postgres.password);
    assert.equal(pg.POSTGRES_DB, stand.postgres.database);
    const initSql = mounts(service(compose, "postgres")).filter((m) => m.target.startsWith("/docker-entrypoint-initdb.d/"));
    const sql = initSql.map((m) => readFileSync(bindSourcePath(m), "utf8")).join("\n");
    assert.match(sql, new RegExp(`CREATE DATABASE ${stand.postgres.runner_database}\\b`));
  });
});

void describe("ClickHouse XML: cluster, macros, keeper, DDL queue", () => {
  void test("both nodes mount the same server config, and only files that exist", () => {
    const files = CH_NODES.map((n) => mountedFile(n, "/etc/clickhouse-server/config.d/stand-server.xml"));
    assert.equal(new Set(files).size, 1);
    assert.ok(files.every((f) => f.startsWith(path.join(repoRoot, "deploy", "compose") + path.sep)));
  });

  void test(`cluster ${stand.clickhouse.cluster}: 2 shards x 1 replica, the compose nodes on their native ports`, () => {
    const server = serverXmlOf("clickhouse-01");
    assert.deepEqual(Object.keys(clusters(server)), [stand.clickhouse.cluster], "remote_servers must hold exactly the stand cluster");
    const cluster = clusters(server)[stand.clickhouse.cluster];
    assert.ok(cluster?.secret, "a cluster secret carries the initiating user to the other shard");
    assert.equal(cluster.shard.length, 2);
    assert.deepEqual(cluster.shard.map((s) => s.replica.length), [1, 1]);
    assert.deepEqual(cluster.shard.map((s) => s.internal_replication), ["true", "true"]);
    const replicas = cluster.shard.map((s) => `${s.replica[0]?.host}:${s.replica[0]?.port}`);
    assert.deepEqual(replicas, CH_NODES.map((n) => `${n}:${standNode(n).tcp_port}`));
  });

  void test("distributed DDL queue and keeper endpoint", () => {
    const server = serverXmlOf("clickhouse-01");
    assert.equal(server.distributed_ddl.path, DDL_QUEUE);
    assert.deepEqual(server.zookeeper.node.map((n) => `${n.host}:${n.port}`), [`${KEEPER}:${stand.zookeeper.port}`]);
    const keeperFile = mountedFile(KEEPER, "/etc/clickhouse-keeper/keeper_config.xml");
    const keeper = readKeeperXml(keeperFile).keeper_server;
    assert.equal(keeper.tcp_port, String(stand.zookeeper.port));
    assert.ok((keeper.four_letter_word_white_list ?? "").split(",").includes("ruok"), "the healthcheck asks ruok");
  });

  void test("per-node macros and ports", () => {
    const shards = new Set<string>();
    for (const name of CH_NODES) {
      const node = nodeXmlOf(name);
      const expected = standNode(name);
      assert.equal(node.macros.cluster, stand.clickhouse.cluster, `${name} {cluster}`);
      assert.equal(node.macros.replica, name, `${name} {replica}`);
      assert.equal(Number(node.macros.shard), expected.shard, `${name} {shard}`);
      shards.add(node.macros.shard);
      assert.deepEqual(
        [node.http_port, node.tcp_port, node.interserver_http_port].map(Number),
        [expected.http_port, expected.tcp_port, expected.interserver_port],
        `${name} listens on stand.yaml's ports`,
      );
      assert.equal(node.interserver_http_host, name);
      assert.ok(!xmlRootKeys(mountedFile(name, "/etc/clickhouse-server/config.d/stand-server.xml")).includes("macros"));
    }
    assert.equal(shards.size, 2, "each node is its own shard");
  });
});

void describe("ClickHouse XML: the one accounts file", () => {
  const accounts = accountsOf("clickhouse-01");
  const users = declaredUsers(accounts);
  const roles = accounts.roles ?? {};
  const roleGrants = (role: string) => grantsOf(roles[role] ?? {});

  void test("both nodes mount the same accounts file", () => {
    const files = CH_NODES.map((n) => mountedFile(n, "/etc/clickhouse-server/users.d/stand-accounts.xml"));
    assert.equal(new Set(files).size, 1);
  });

  void test("declares exactly admin, lifecycle, etl, reader with stand.yaml's passwords; default removed", () => {
    const expected = Object.values(stand.clickhouse.accounts);
    assert.deepEqual(Object.keys(users).sort(), expected.map((a) => a.user).sort());
    for (const a of expected) assert.equal(users[a.user]?.password, a.password, `password of ${a.user}`);
    assert.deepEqual(removedUsers(accounts), ["default"]);
  });

  void test("each account has the role the spec names, and the role is declared", () => {
    const expectedRoles: Record<string, string> = { lifecycle: "lifecycle_owner", etl: "etl_writer", reader: "stand_reader" };
    for (const [user, role] of Object.entries(expectedRoles)) {
      assert.deepEqual(grantsOf(users[user] ?? {}).map((g) => g.query), [`GRANT ${role}`], `${user} gets ${role}`);
      assert.ok(roles[role], `role ${role} is declared`);
    }
    // ClickHouse refuses to start when a user has both <grants> and <access_management>.
    const mixed = Object.entries(users).filter(([, u]) => u.grants && u.access_management !== undefined);
    assert.deepEqual(mixed.map(([n]) => n), []);
    assert.equal(users.admin?.access_management, "1");
  });

  void test("lifecycle_owner: creates and drops the application databases, cluster DDL, system.settings", () => {
    const grants = roleGrants("lifecycle_owner");
    for (const db of APP_DATABASES) {
      const privileges = grants.filter((g) => g.on === `${db}.*`).flatMap((g) => g.privileges);
      for (const p of ["CREATE DATABASE", "DROP DATABASE", "CREATE TABLE", "DROP TABLE", "SELECT", "INSERT"]) {
        assert.ok(privileges.includes(p), `lifecycle_owner lacks ${p} ON ${db}.*`);
      }
    }
    assert.ok(grants.some((g) => g.on === "*.*" && g.privileges.includes("CLUSTER")), "CLUSTER ON *.*");
    assert.ok(grants.some((g) => g.on === "system.settings" && g.privileges.includes("SELECT")));
  });

  void test("lifecycle_owner: no admin rights on the system databases or the server", () => {
    const grants = roleGrants("lifecycle_owner");
    const globalAllowed = new Set(["CLUSTER", "KAFKA", "FILE", "REMOTE", "URL", "S3"]);
    const global = grants.filter((g) => g.on === "*.*" || g.on === "*");
    assert.deepEqual(global.flatMap((g) => g.privileges.filter((p) => !globalAllowed.has(p))), [], "global grants beyond cluster DDL and sources");
    const systemDbs = grants.filter((g) => /^(system|information_schema|INFORMATION_SCHEMA|default)\./.test(g.on));
    const beyondSelect = systemDbs.filter((g) => g.on.endsWith(".*") || g.privileges.some((p) => p !== "SELECT"));
    assert.deepEqual(beyondSelect.map((g) => g.query), [], "only SELECT on named system tables");
    const appOnly = grants.filter((g) => g.on !== "" && !global.includes(g) && !systemDbs.includes(g));
    assert.deepEqual(appOnly.filter((g) => !APP_DATABASES.includes(g.on.split(".")[0] ?? "")).map((g) => g.query), []);
  });

  void test("etl_writer: reads and writes the layers, never drops a database or truncates", () => {
    const grants = roleGrants("etl_writer");
    const forbidden = ["DROP DATABASE", "DROP", "TRUNCATE", "ALL", "CREATE DATABASE", "ACCESS MANAGEMENT", "SYSTEM"];
    assert.deepEqual(grants.filter((g) => g.privileges.some((p) => forbidden.includes(p))).map((g) => g.query), []);
    for (const db of ["stg", "ods", "dds", "dm"]) {
      const privileges = grants.filter((g) => g.on === `${db}.*`).flatMap((g) => g.privileges);
      assert.ok(privileges.includes("SELECT") && privileges.includes("INSERT"), `etl_writer reads and writes ${db}`);
    }
  });

  void test("reader: a read-only profile and SELECT-only grants", () => {
    const profile = accounts.profiles?.[users.reader?.profile ?? "default"];
    assert.ok(Number(profile?.readonly ?? 0) >= 1, `reader's profile ${users.reader?.profile} must set readonly`);
    const writes = roleGrants("stand_reader").filter((g) => g.privileges.some((p) => !["SELECT", "SHOW", "DICTGET"].includes(p)));
    assert.deepEqual(writes.map((g) => g.query), []);
  });
});

void describe("runner: image, stand config", () => {
  const runner = service(compose, "runner");
  const dockerfile = path.join(repoRoot, runner.build?.dockerfile ?? "Dockerfile");
  const steps = dockerfileInstructions(dockerfile);
  const args = (op: string) => steps.filter((s) => s.op === op).map((s) => s.args);

  void test("built from this repository, with the Docker socket to build the generator", () => {
    assert.equal(runner.build?.context, ".");
    assert.ok(existsSync(dockerfile), `${dockerfile} exists`);
    assert.ok(mounts(runner).some((m) => m.source === "/var/run/docker.sock" && m.target === "/var/run/docker.sock"));
  });

  void test("Dockerfile: Node 20 slim, npm ci, a non-root user, a health check, the API entry", () => {
    assert.deepEqual(args("FROM"), ["node:20-bookworm-slim"]);
    assert.ok(args("RUN").some((r) => /\bnpm ci\b/.test(r)), "installs with npm ci");
    const user = args("USER").at(-1) ?? "root";
    assert.ok(!["root", "0", "0:0"].includes(user), `runs as ${user}`);
    assert.match(args("HEALTHCHECK").join(" "), /\/api\/v2\/monitor\/health/);
    const cmd = args("CMD").at(-1) ?? "";
    assert.deepEqual(JSON.parse(cmd) as unknown, ["node", "--import", "tsx", "src/server/main.ts"]);
  });

  void test("Dockerfile: the package patches are in the image before npm ci runs their postinstall", () => {
    const npmCi = steps.findIndex((s) => s.op === "RUN" && /\bnpm ci\b/.test(s.args));
    const patches = steps.findIndex((s) => s.op === "COPY" && /(^|\s)(\.\/)?patches\/?(\s|$)/.test(s.args));
    assert.ok(patches >= 0, "the Dockerfile copies patches/");
    assert.ok(patches < npmCi, `patches/ is copied (step ${patches}) before npm ci (step ${npmCi})`);
  });

  void test(".dockerignore keeps local state out of the build context", () => {
    const entries = ignoreEntries(path.join(repoRoot, ".dockerignore"));
    for (const e of ["node_modules", ".stand", "test-output", ".git", "logs"]) assert.ok(entries.includes(e), `.dockerignore lists ${e}`);
    assert.ok(!entries.some((e) => /^\/?(generator|src|package(-lock)?\.json)\/?$/.test(e)), "the image needs src, generator and the lockfile");
  });

  void test("STAND_CONFIG is a valid stand config with stand.yaml's ports and accounts", () => {
    const file = runnerStandConfigPath(runner);
    const inCompose = loadStandYaml(file);
    // Hosts (service names inside the compose network), node names and the health timeout may differ;
    // the keeper is the local stand's (docker compose restarts its services with restart policies),
    // and so is Superset (make bi). The runner's token differs: it listens beyond loopback in its
    // container, where a token of 24+ characters is required (src/api/open-listen.ts).
    assert.equal(inCompose.keeper, undefined, "no keeper in the compose stand: its restart policies keep it");
    assert.equal(inCompose.bi, undefined, "no Superset in the compose stand: make bi is the local stand's");
    assert.ok(inCompose.runner.api_token.length >= MIN_OPEN_TOKEN_LENGTH, "the compose runner listens beyond loopback: its token is a long one");
    assert.equal(readFileSync(path.join(repoRoot, "deploy", "compose", "prometheus", "prometheus.yml"), "utf8").includes(`credentials: ${inCompose.runner.api_token}`), true, "its Prometheus sends the runner's token");
    const portsAndAccounts = ({ keeper: _keeper, bi: _bi, ...c }: typeof stand) => ({
      ...c,
      postgres: { ...c.postgres, host: undefined },
      zookeeper: { ...c.zookeeper, host: undefined },
      kafka: { ...c.kafka, host: undefined },
      runner: { ...c.runner, listen_host: undefined, api_token: "" },
      loader: { ...c.loader, listen_host: undefined },
      prometheus: c.prometheus ? { ...c.prometheus, host: undefined } : undefined,
      clickhouse: { ...c.clickhouse, nodes: c.clickhouse.nodes.map((n) => ({ ...n, name: "", host: undefined })) },
      health_timeout_seconds: 0,
    });
    assert.deepEqual(
      portsAndAccounts(inCompose),
      portsAndAccounts(stand),
      "only hosts, node names, the health timeout, the runner's token, the keeper and Superset may differ",
    );
    assert.deepEqual(inCompose.clickhouse.nodes.map((n) => n.name), [...CH_NODES], "nodes are named after their compose hosts");
    const hosts = [inCompose.postgres.host, inCompose.zookeeper.host, inCompose.kafka.host, ...inCompose.clickhouse.nodes.map((n) => n.host)];
    for (const h of hosts) assert.ok(h !== undefined && h in compose.services, `host ${String(h)} is a compose service`);
    assert.equal(inCompose.runner.listen_host, "0.0.0.0", "the API listens on all container interfaces so the published port reaches it");
    assert.equal(inCompose.loader.listen_host, "0.0.0.0", "the loader's /health listens on all container interfaces so the published port reaches it");
  });
});

void describe("loader: the runner's image, its own entry point", () => {
  const loader = service(compose, "loader");
  const runner = service(compose, "runner");

  void test("the runner's image and stand config", () => {
    assert.equal(loader.image, runner.image);
    assert.deepEqual(loader.build, runner.build);
    assert.equal(environment(loader).STAND_CONFIG, environment(runner).STAND_CONFIG);
  });

  void test("runs the entry point the local stand runs", () => {
    assert.deepEqual(loader.command, ["node", "--import", "tsx", path.relative(repoRoot, LOADER_ENTRY)]);
  });

  void test("has 30 s to flush and commit on SIGTERM before docker kills it", () => {
    const grace = /^(\d+)(ms|s|m)$/.exec(loader.stop_grace_period ?? "");
    const seconds = grace ? Number(grace[1]) * ({ ms: 0.001, s: 1, m: 60 } as const)[grace[2] as "ms" | "s" | "m"] : 10;
    assert.ok(seconds >= 30, `stop_grace_period ${loader.stop_grace_period ?? "(default 10s)"}`);
  });
});

void describe("prometheus: the stand's rules, scraping the runner and the loader", () => {
  const prometheus = service(compose, "prometheus");
  const inCompose = loadStandYaml(runnerStandConfigPath(service(compose, "runner")));

  void test("mounts deploy/compose/prometheus/: its config names the runner and the loader by their compose names, and the rules are the stand's for the compose config", () => {
    const config = readFileSync(mountedFile("prometheus", "/etc/prometheus/prometheus.yml"), "utf8");
    assert.ok(inCompose.prometheus, "the compose stand config has a prometheus section (the World page reads it)");
    assert.equal(inCompose.prometheus.host, "prometheus");
    assert.ok(config.includes(`"127.0.0.1:${inCompose.prometheus.port}"`), "scrapes itself");
    // the runner's and the loader's replicas by the service's name (Docker's DNS answers each container)
    for (const [job, port] of [["runner", stand.runner.api_port], ["loader", stand.loader.port]] as const) {
      assert.match(config, new RegExp(`job_name: ${job}\\n(?:.*\\n)*? {4}dns_sd_configs:\\n {6}- names: \\["${job}"\\]\\n {8}type: A\\n {8}port: ${port}\\n`), `scrapes every ${job} replica on ${port}`);
    }
    const rules = readFileSync(mountedFile("prometheus", "/etc/prometheus/rules.yml"), "utf8");
    assert.equal(rules, renderRules(inCompose.prometheus), "deploy/compose/prometheus/rules.yml is the stand's rules rendered for the compose config (prometheus-rules in src/stand/cli.ts writes it)");
  });

  void test("keeps the stand's retention and listens on its port", () => {
    const args = prometheus.command ?? [];
    assert.ok(Array.isArray(args));
    assert.ok(inCompose.prometheus);
    for (const flag of [`--storage.tsdb.retention.time=${inCompose.prometheus.retention_time}`, `--storage.tsdb.retention.size=${inCompose.prometheus.retention_size}`, `--web.listen-address=0.0.0.0:${inCompose.prometheus.port}`]) {
      assert.ok(args.includes(flag), `command has ${flag}: ${args.join(" ")}`);
    }
  });
});
