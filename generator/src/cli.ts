// The generator's one entry point, the same as a container command and as a local process:
//   batch --day D [--days N] [--limit N]    play days as fast as possible
//   live --day D [--speed X]                play one day paced on the model clock
//   snapshot --day D [--days N]             send order snapshots (topic orders)
//   inventory --write | --check             regenerate or verify the passports (data/world-inventory*.json)
// Every flag can also come from GENERATOR_<FLAG>; exactly one of --brokers or --file is required.
import path from "node:path";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { GeneratorConfigError, DEFAULT_HITS_TOPIC, DEFAULT_ORDERS_TOPIC, options, resolveLive, resolvePlay, type RawOptions } from "./config.ts";
import { checkInventory, inventoryPath, writeInventory } from "./inventory.ts";
import { formatCount, stderrLogger as logger } from "./log.ts";
import { runBatch, runLive, runSnapshots } from "./play.ts";
import { GENERATOR_VERSION } from "./world.ts";

function withOutput(command: Command, topicEnv: string, topic: string): Command {
  return command
    .addOption(options.brokers())
    .addOption(options.file())
    .addOption(options.topic(topicEnv, topic))
    .addOption(options.seed())
    .addOption(options.size())
    .addOption(options.batchSize())
    .addOption(options.batchBytes())
    .addOption(options.inFlight());
}

export function buildProgram(): Command {
  const program = new Command("generator")
    .description("deterministic synthetic clickstream and order snapshots")
    .version(GENERATOR_VERSION)
    .showHelpAfterError()
    .exitOverride();

  withOutput(program.command("batch").description("play days as fast as the sink takes them"), "GENERATOR_TOPIC", DEFAULT_HITS_TOPIC)
    .addOption(options.day()).addOption(options.days(1)).addOption(options.limit())
    .action(async (raw: RawOptions) => {
      const report = await runBatch(resolvePlay(raw), logger);
      logger.info(`batch finished: ${formatCount(report.sent)} hits in ${report.seconds.toFixed(1)} s`);
    });

  withOutput(program.command("live").description("play one day paced in model time ÷ speed"), "GENERATOR_TOPIC", DEFAULT_HITS_TOPIC)
    .addOption(options.day()).addOption(options.speed()).addOption(options.lagLog())
    .action(async (raw: RawOptions) => {
      const report = await runLive(resolveLive(raw), logger);
      logger.info(`live finished: ${formatCount(report.sent)} hits in ${report.seconds.toFixed(1)} s`);
    });

  withOutput(program.command("snapshot").description("send the order snapshots of days D … D+N-1"), "GENERATOR_ORDERS_TOPIC", DEFAULT_ORDERS_TOPIC)
    .addOption(options.day()).addOption(options.days(1))
    .action(async (raw: RawOptions) => {
      const reports = await runSnapshots(resolvePlay(raw), logger);
      logger.info(`snapshots finished: ${reports.length} sent, ${formatCount(reports.reduce((s, r) => s + r.orders, 0))} orders`);
    });

  program.command("inventory").description("regenerate (--write) or verify (--check) the passport of every world size (data/world-inventory*.json)")
    .addOption(new Option("--write", "write the passport and the catalog CSV").conflicts("check"))
    .addOption(new Option("--check", "exit 1 when the files differ from what the generator gives"))
    .addOption(options.seed())
    .action((raw: { write?: boolean; check?: boolean; seed: number }) => {
      if (raw.write) {
        for (const passport of writeInventory(undefined, raw.seed)) {
          logger.info(`wrote ${inventoryPath(passport.size)}: ${formatCount(passport.totals.events)} hits, ${formatCount(passport.totals.snapshot_orders)} snapshot rows`);
        }
        return;
      }
      if (!raw.check) throw new GeneratorConfigError("inventory needs --write or --check");
      const problems = checkInventory(undefined, raw.seed);
      for (const problem of problems) logger.error(problem);
      if (problems.length > 0) throw new GeneratorConfigError("the passports are out of date: run inventory --write and commit them");
      logger.info("every passport (data/world-inventory*.json) matches the generator");
    });
  return program;
}

/** The error's message, with its cause's when that adds something. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : "";
  // eslint-disable-next-line no-restricted-syntax -- composes words for a person; decides nothing
  return cause && !err.message.includes(cause) ? `${err.message}: ${cause}` : err.message;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv], { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    logger.error(describeError(err));
    return err instanceof GeneratorConfigError ? 2 : 1;
  }
}

// Run only as the entry point, so tests can import buildProgram and main. Compared as real paths:
// started through a symlinked directory, argv[1] names the link and import.meta.url the target.
const entry = process.argv[1];
if (entry !== undefined && realpathSync(path.resolve(entry)) === realpathSync(fileURLToPath(import.meta.url))) {
  process.exitCode = await main(process.argv.slice(2));
}
