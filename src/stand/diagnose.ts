// What is wrong with the stand, each finding with the command that mends it: services down or
// crash-looping (the keeper's records and the ports), a loader whose sink is down or whose rows are
// held, a keeper that is not running. `make doctor` prints these (with the world's own findings,
// src/world-ops/doctor.ts), a world wait that makes no progress logs them and fails at once on one
// that cannot clear by itself, and rebuild-storage refuses on them before it touches anything.
import { type StandConfig, loadStandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import { nodeServicePaths, standPaths, type StandContext, Supervisor } from "../services/index.ts";
import { standStatus } from "./stand.ts";

export interface Finding {
  /** The service or thing: "clickhouse-ch2", "loader", "keeper". */
  subject: string;
  problem: string;
  /** The command or step that mends it. */
  fix: string;
  /** True when it cannot clear by itself (crash-looping): a wait on it fails at once. */
  permanent: boolean;
}

/** A quiet context from a config, for callers that are not the stand CLI (the runner's world tasks). */
export function quietStandContext(config: StandConfig = loadStandConfig()): StandContext {
  const paths = standPaths(config);
  return { config, paths, supervisor: new Supervisor(paths.pids), print: () => undefined };
}

function logOf(ctx: StandContext, service: string): string {
  if (isNodeService(service)) return nodeServicePaths(ctx, service).log;
  return `the log under ${ctx.paths.root}`;
}

/** Our own processes: the keeper, and every instance of the runner and loader pools (runner, runner-2, loader, …). */
function isNodeService(service: string): boolean {
  return service === "keeper" || /^(runner|loader)(-\d+)?$/.test(service);
}

/** Every problem the stand's services show now; none when all serve and the keeper is current. */
export async function standFindings(ctx: StandContext): Promise<Finding[]> {
  const findings: Finding[] = [];
  const { services, keeper } = await standStatus(ctx);
  for (const s of services) {
    if (s.healthy) continue;
    const kept = s.kept;
    if (kept?.state === "crash-looping") {
      const tail = kept.lastExit?.logTail.slice(-3).join(" | ") ?? "";
      findings.push({
        subject: s.name,
        problem: `crash-looping: ${kept.quickDeaths} quick deaths in a row, last ${kept.lastExit?.how ?? "?"}${tail ? `; its last log lines: ${tail}` : ""}`,
        fix: `read ${logOf(ctx, s.name)}, fix the cause, then make up (it starts it again)`,
        permanent: true,
      });
    } else if (/^loader(-\d+)?$/.test(s.name) && s.pid !== undefined) {
      findings.push({ subject: s.name, problem: s.detail, fix: "the rows are held, none lost: make check-services names the node or table; they land once it serves", permanent: false });
    } else {
      const restarting = kept && keeper.current && (kept.state === "restarting" || kept.state === "starting" || kept.state === "waiting" || kept.state === "not-serving");
      findings.push({
        subject: s.name,
        problem: `${s.detail}${kept ? ` (keeper: ${kept.state}, ${kept.message})` : ""}`,
        fix: restarting ? "the keeper is starting it again; if it stays down, read its log, then make up" : "make up starts it (make check-services shows the stand)",
        permanent: false,
      });
    }
  }
  if (keeper.configured && !keeper.current && ctx.config.keeper?.autostart === true) {
    findings.push({ subject: "keeper", problem: keeper.note, fix: "make up starts it", permanent: false });
  }
  return findings;
}

/** Every finding with its fix, joined by `separator` (one log line by default), or that none was found. */
export function describeFindings(findings: readonly Finding[], separator = "; "): string {
  if (findings.length === 0) return "no stand service reports a problem";
  return findings.map((f) => `${f.subject}: ${f.problem} → ${f.fix}`).join(separator);
}

/** standFindings, never throwing: a diagnosis that fails says so instead. */
export async function safeStandFindings(ctx: StandContext): Promise<Finding[]> {
  try {
    return await standFindings(ctx);
  } catch (err) {
    return [{ subject: "stand", problem: `could not be looked at: ${errorMessage(err)}`, fix: "make check-services", permanent: false }];
  }
}
