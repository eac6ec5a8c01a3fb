// The runner's command line, a client of its REST API: trigger (and follow) runs, read runs, tasks
// and logs, pause DAGs, edit variables. Exit codes: 0 ok, 1 run failed, 2 usage/connection/API
// error, 3 `trigger --wait --timeout` gave up while the run was still going.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { apiBaseUrl, loadStandConfig } from "../config/index.ts";
import { CliError, EXIT, RunnerApiClient } from "./client.ts";
import * as commands from "./commands.ts";
import type { CommandContext } from "./commands.ts";
import { schemaStatus } from "./schema.ts";
import { errorMessage } from "../errors.ts";

interface GlobalOptions {
  apiUrl?: string;
  token?: string;
  json?: boolean;
}

function resolveConnection(options: GlobalOptions): { url: string; token: string | undefined } {
  if (options.apiUrl && options.token) return { url: options.apiUrl, token: options.token };
  let config: ReturnType<typeof loadStandConfig> | undefined;
  try {
    config = loadStandConfig();
  } catch (err) {
    if (!options.apiUrl) {
      throw new CliError(`${errorMessage(err)}\nthe CLI reads the API address from the stand config; fix it or pass --api-url <url>`);
    }
  }
  return {
    url: options.apiUrl ?? apiBaseUrl(config),
    token: options.token ?? config?.runner.api_token,
  };
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command("runner")
    .description("Command line of the stand's DAG runner (talks to its REST API)")
    .option("--api-url <url>", "base URL of the runner API (default: http://<bind_host>:<runner.api_port> from the stand config)")
    .option("--token <token>", "bearer token for changes (default: runner.api_token from the stand config)")
    .option("--json", "print the API's JSON instead of tables")
    .showHelpAfterError()
    .exitOverride();

  const context = (): CommandContext => {
    const globals = program.opts<GlobalOptions>();
    const { url, token } = resolveConnection(globals);
    return { client: new RunnerApiClient(url, token), json: globals.json === true, print };
  };
  const action =
    <A extends unknown[]>(fn: (ctx: CommandContext, ...args: A) => Promise<number>) =>
    async (...args: A) => {
      setExitCode(await fn(context(), ...args));
    };

  program
    .command("trigger <dag_id>")
    .description("trigger a DAG run; with --wait, print each state change until it ends (exit 0 success, 1 failed)")
    .option("--conf <json>", "run conf as a JSON object")
    .option("--run-id <id>", "the dag_run_id (default: chosen by the runner)")
    .option("--logical-date <iso>", "logical date (ISO 8601 with zone); default none")
    .option("--note <text>", "a note on the run")
    .option("--wait", "follow the run until it is terminal")
    .option("--timeout <seconds>", "with --wait: stop waiting after this long (exit 3)")
    .addOption(new Option("--poll-ms <ms>", "with --wait: poll interval").default("250").hideHelp())
    .action(action((ctx, dagId: string, options: commands.TriggerOptions) => commands.trigger(ctx, dagId, options)));

  program.command("dags").description("list DAGs").action(action((ctx) => commands.listDags(ctx)));
  program
    .command("runs <dag_id>")
    .description("list a DAG's runs, newest first")
    .option("--limit <n>", "how many", "20")
    .option("--state <state>", "only runs in this state (queued, running, success, failed)")
    .action(action((ctx, dagId: string, options: { limit?: string; state?: string }) => commands.listRuns(ctx, dagId, options)));
  program
    .command("tasks <dag_id> <run_id>")
    .description("list the task instances of a run")
    .action(action((ctx, dagId: string, runId: string) => commands.listTasks(ctx, dagId, runId)));
  program
    .command("logs <dag_id> <run_id> <task_id>")
    .description("print a task's log (the latest try unless --try)")
    .option("--try <n>", "try number, from 1")
    .action(
      action((ctx, dagId: string, runId: string, taskId: string, options: { try?: string }) =>
        commands.showLogs(ctx, dagId, runId, taskId, options),
      ),
    );
  program
    .command("mark <dag_id> <run_id> <state>")
    .description("mark a run failed or success: a running one stops (its open child runs too) and frees what it holds")
    .action(action((ctx, dagId: string, runId: string, state: string) => commands.markRun(ctx, dagId, runId, state)));
  program
    .command("clear <dag_id> <run_id>")
    .description("run a run's failed tasks (and their downstream) again in the same run")
    .option("--task <task_id...>", "only these tasks")
    .option("--all", "every task, not only the failed ones")
    .option("--no-downstream", "not their downstream tasks")
    .option("--upstream", "their upstream tasks too")
    .option("--dry-run", "only list what would be cleared")
    .option("--latest-version", "move the ended run to the DAG's latest version first (tasks it no longer has end removed)")
    .action(action((ctx, dagId: string, runId: string, options: commands.ClearOptions) => commands.clearTasks(ctx, dagId, runId, options)));
  program.command("pause <dag_id>").description("pause a DAG").action(action((ctx, dagId: string) => commands.setPaused(ctx, dagId, true)));
  program.command("unpause <dag_id>").description("unpause a DAG").action(action((ctx, dagId: string) => commands.setPaused(ctx, dagId, false)));
  program.command("health").description("health of the metadatabase and scheduler (exit 1 if unhealthy)").action(action((ctx) => commands.showHealth(ctx)));

  program
    .command("schema")
    .description("the world's DDL: sql/ddl/ against what the world was built with")
    .command("status")
    .description("every DDL file with its drift flag (changed, new, removed); exit 1 on drift")
    .action(action((ctx) => schemaStatus(ctx)));

  const vars = program.command("vars").description("read and change variables");
  vars.command("list").description("list variables").action(action((ctx) => commands.listVariables(ctx)));
  vars.command("get <key>").description("print a variable's value").action(action((ctx, key: string) => commands.getVariable(ctx, key)));
  vars
    .command("set <key> <value>")
    .description("create or change a variable")
    .option("--description <text>", "what the variable is for")
    .action(action((ctx, key: string, value: string, options: { description?: string }) => commands.setVariable(ctx, key, value, options)));
  vars.command("delete <key>").description("delete a variable").action(action((ctx, key: string) => commands.deleteVariable(ctx, key)));
  vars.command("history <key>").description("every change of a variable").action(action((ctx, key: string) => commands.variableHistory(ctx, key)));
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.OK;
  const program = buildProgram((code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every parse problem is a usage error.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    if (err instanceof CliError) {
      process.stderr.write(`error: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.USAGE;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exitCode = await runCli(process.argv.slice(2));
}
