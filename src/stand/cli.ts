// `node --import tsx src/stand/cli.ts up|down|status|clean|config-get`: the local stand launcher.
// The Makefile targets stand-up, stand-down, check-services and clean call this.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Command, Option } from "commander";
import { loadStandConfig } from "../config/index.ts";
import { fetchedToolsVersion, fieldToolPaths, renderRules } from "../addons/index.ts";
import { describeLastExit } from "../keeper/index.ts";
import { biDown, biUp, standClean, standContext, standDown, standStatus, standUp } from "./stand.ts";
import { errorMessage } from "../errors.ts";

function fail(err: unknown): never {
  console.error(`\nstand: ${errorMessage(err)}`);
  process.exit(1);
}

const program = new Command()
  .name("stand")
  .description("Local-process stand: PostgreSQL, ZooKeeper, two ClickHouse nodes, Kafka (KRaft) and the Kafka → ClickHouse loader under .stand/");

program
  .command("up")
  .description("start every service that is not running, in dependency order (the loader last), and wait until healthy")
  .action(async () => {
    await standUp(standContext()).catch(fail);
  });

program
  .command("down")
  .description("stop the services this stand started (pid files), the loader first: SIGTERM, wait, then SIGKILL")
  .action(async () => {
    await standDown(standContext()).catch(fail);
  });

program
  .command("status")
  .description("health of every service (the loader with the state its /health reports); exits 1 when any is unhealthy")
  .action(async () => {
    const { services, keeper } = await standStatus(standContext()).catch(fail);
    for (const s of services) {
      const restarts = s.kept ? String(s.kept.restarts) : "-";
      const lastExit = describeLastExit(s.kept?.lastExit) ?? "-";
      console.log(`${s.healthy ? "ok  " : "FAIL"} ${s.name.padEnd(16)} port ${String(s.port).padEnd(6)} restarts ${restarts.padEnd(3)} ${s.detail}; last exit: ${lastExit}`);
    }
    console.log(keeper.note);
    if (services.some((s) => !s.healthy)) process.exit(1);
  });

program
  .command("bi")
  .description("start Superset (the bi section of the stand config) and put its starter dashboard over the DM marts in place; make bi installs .venv-bi first")
  .action(async () => {
    await biUp(standContext()).catch(fail);
  });

program
  .command("bi-down")
  .description("stop Superset (it stays stopped: the keeper leaves a service stopped on purpose)")
  .action(async () => {
    await biDown(standContext()).catch(fail);
  });

program
  .command("clean")
  .description("stop the stand and remove all its state (.stand/: data, logs, configs, Kafka jars)")
  .action(async () => {
    await standClean(standContext()).catch(fail);
  });

program
  .command("kafka-libs")
  .description("print the Kafka version, the directory the broker's jars go to and the one its tools' jars go to (used by scripts/install-deps.sh)")
  .action(() => {
    const ctx = standContext();
    console.log(`${ctx.config.kafka.version} ${ctx.paths.kafka.libs} ${ctx.paths.kafka.tools}`);
  });

program
  .command("prometheus-rules")
  .description("print the stand's Prometheus alerting rules for this stand config (deploy/compose/prometheus/rules.yml is this, for the compose stand)")
  .action(() => {
    const prometheus = loadStandConfig().prometheus;
    if (!prometheus) fail(new Error("prometheus: the stand config has no prometheus section"));
    process.stdout.write(renderRules(prometheus));
  });

program
  .command("config-get")
  .argument("<key>", "dotted path into the stand config, e.g. kafka.version or state_dir")
  .description("print one value of the stand config (used by scripts/install-deps.sh)")
  .action((key: string) => {
    let value: unknown = loadStandConfig();
    for (const part of key.split(".")) value = (value as Record<string, unknown> | undefined)?.[part];
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      fail(new Error(`no scalar config value at '${key}'`));
    }
    console.log(String(value));
  });

/** Runs a client in this terminal (its stdin, stdout and stderr) and exits with its status. */
function runClient(command: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, ...env } }); // eslint-disable-line no-restricted-properties -- the client gets the user's own environment
  child.on("error", (err) => fail(new Error(`${command} did not start: ${errorMessage(err)}; make install installs it`)));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const ACCOUNTS = ["reader", "etl", "lifecycle", "admin"] as const;

program
  .command("ch")
  .description("clickhouse-client on a node of this stand, as one of its accounts (make ch ACCOUNT=… NODE=…); arguments after -- go to clickhouse-client")
  .addOption(new Option("--account <account>", "the ClickHouse account (SPEC, Accounts)").choices(ACCOUNTS).default("reader"))
  .option("--node <node>", "the node: its name in stand.yaml (ch1 or ch2 by default)")
  .argument("[client-args...]", "more clickhouse-client arguments, e.g. -q 'SELECT 1'")
  .action((clientArgs: string[], options: { account: (typeof ACCOUNTS)[number]; node?: string }) => {
    const config = loadStandConfig();
    const nodes = config.clickhouse.nodes;
    const node = options.node === undefined || options.node === "" ? nodes[0] : nodes.find((n) => n.name === options.node);
    if (!node) fail(new Error(`--node (NODE=): no ClickHouse node named '${options.node ?? ""}' in the stand config; it has ${nodes.map((n) => n.name).join(", ")}`));
    const account = config.clickhouse.accounts[options.account];
    runClient("clickhouse-client", ["--host", node.host ?? config.bind_host, "--port", String(node.tcp_port), "--user", account.user, "--password", account.password, ...clientArgs]);
  });

program
  .command("psql")
  .description("psql on this stand's Postgres (make psql DB=runner|stand); arguments after -- go to psql")
  .addOption(new Option("--database <database>", "runner: the runner's metadata database; stand: the stand's own").choices(["runner", "stand"]).default("runner"))
  .argument("[client-args...]", "more psql arguments, e.g. -c 'select 1'")
  .action((clientArgs: string[], options: { database: "runner" | "stand" }) => {
    const config = loadStandConfig();
    const pg = config.postgres;
    const database = options.database === "runner" ? pg.runner_database : pg.database;
    runClient("psql", ["-h", pg.host ?? config.bind_host, "-p", String(pg.port), "-U", pg.user, "-d", database, ...clientArgs], { PGPASSWORD: pg.password });
  });

program
  .command("kafka-lag")
  .description("every consumer group's committed offsets and lag per partition (Kafka's kafka-consumer-groups.sh --describe --all-groups)")
  .action(() => {
    const ctx = standContext();
    const script = path.join(fieldToolPaths(ctx.paths).bin, "kafka-consumer-groups.sh");
    if (fetchedToolsVersion(ctx.paths) !== ctx.config.kafka.version || !existsSync(script)) {
      fail(new Error(`Kafka's tools are not in place for Kafka ${ctx.config.kafka.version} (${script}): run make install, then make stand-up`));
    }
    runClient(script, ["--describe", "--all-groups"]);
  });

await program.parseAsync();
