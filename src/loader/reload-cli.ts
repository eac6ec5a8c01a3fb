// `make loader-reload`: asks every loader instance of the stand config (loader.instances) to read
// loader.options again (POST /reload on its port, as SIGHUP or a change of the file does) and prints
// what each did: what changed, nothing, or why it refused the file (it then keeps its running
// options). Exits 1 when one refused or could not be reached.
import { fileURLToPath } from "node:url";
import path from "node:path";
import { instancesOf, loadStandConfig, type StandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import { describeReload, type ReloadOutcome } from "./reload.ts";

/** One instance's answer, in words, and whether it took the file (applied or unchanged). */
export interface InstanceReload {
  name: string;
  ok: boolean;
  line: string;
}

function isReloadOutcome(body: unknown): body is ReloadOutcome {
  return typeof body === "object" && body !== null && "result" in body && "trigger" in body && "changes" in body && Array.isArray(body.changes);
}

/** POSTs /reload to each loader instance of `config`, one after the other. */
export async function reloadLoaders(config: StandConfig, timeoutMs = 5000): Promise<InstanceReload[]> {
  const results: InstanceReload[] = [];
  for (const instance of instancesOf(config, "loader")) {
    const url = `http://${config.bind_host}:${instance.port}/reload`;
    try {
      const response = await fetch(url, { method: "POST", signal: AbortSignal.timeout(timeoutMs) });
      const body: unknown = await response.json();
      if (!isReloadOutcome(body)) throw new Error(`answered ${response.status} with no reload outcome (an older loader? make up restarts it on new code)`);
      results.push({ name: instance.name, ok: body.result !== "refused", line: describeReload(body) });
    } catch (err) {
      results.push({ name: instance.name, ok: false, line: `not reached at ${url}: ${errorMessage(err)}; is it running? make check-services shows the loaders` });
    }
  }
  return results;
}

async function main(): Promise<void> {
  let config: StandConfig;
  try {
    config = loadStandConfig();
  } catch (err) {
    console.error(`loader-reload: ${errorMessage(err)}\nThe running loaders refuse this file too and keep their options; fix it and run make loader-reload again.`);
    process.exit(1);
  }
  const results = await reloadLoaders(config);
  for (const r of results) console.log(`${r.ok ? "ok  " : "FAIL"} ${r.name}: ${r.line}`);
  if (results.some((r) => !r.ok)) process.exit(1);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(`loader-reload: ${errorMessage(err)}`);
    process.exit(1);
  });
}
