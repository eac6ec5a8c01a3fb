// `node --import tsx src/stand/cli.ts up|down|status|clean|config-get`: the local stand launcher.
// The Makefile targets stand-up, stand-down, check-services and clean call this.
import { Command } from "commander";
import { loadStandConfig } from "../config/stand.ts";
import { describeLastExit } from "./keeper.ts";
import { standClean, standContext, standDown, standStatus, standUp } from "./stand.ts";
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
  .command("clean")
  .description("stop the stand and remove all its state (.stand/: data, logs, configs, Kafka jars)")
  .action(async () => {
    await standClean(standContext()).catch(fail);
  });

program
  .command("kafka-libs")
  .description("print the Kafka version and the directory its jars go to (used by scripts/install-deps.sh)")
  .action(() => {
    const ctx = standContext();
    console.log(`${ctx.config.kafka.version} ${ctx.paths.kafka.libs}`);
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

await program.parseAsync();
