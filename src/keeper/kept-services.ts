// The stand's services as the keeper sees them (src/keeper/policy.ts's KeptService): the four
// infrastructure services by their ServiceDefinition, the loader and the runner by their node
// service spec. Every start goes through the service's start lock and looks at its want file again
// under it, so a `make down` or `make up` at the same moment is never undone.
import type { KeptService } from "./policy.ts";
import { loaderInstances, loaderSpec, launchNodeService, nodeServicePaths, nodeServiceSupervisor, type NodeServiceSpec, runnerInstances, runnerSpec, answersWithin, launchNow, serves, type ServiceDefinition, type StandContext, isProcessOurs, tailFile, type Supervisor } from "../services/index.ts";

function tails(files: string[], lines: number): string[] {
  return files.flatMap((file) => tailFile(file, lines).split("\n").filter((line) => line.trim() !== "").slice(-lines));
}

/** The parts every kept service shares: its pid file and want file, its start lock. */
function keptVia(supervisor: Supervisor, name: string, logFiles: string[], needs: string[], parts: Pick<KeptService, "serves"> & { launch: KeptService["start"]; stop: () => Promise<unknown> }): KeptService {
  return {
    name,
    logFiles,
    needs,
    pidRecord() {
      const record = supervisor.readPid(name);
      return record && isProcessOurs(record) ? record : undefined;
    },
    want: () => supervisor.readWant(name),
    serves: parts.serves,
    start: (onExit) =>
      supervisor.withStartLock(name, async () => {
        // looked at again under the lock: `make down` or `make up` may have acted since the tick began
        if (supervisor.readWant(name)?.want !== "up" || supervisor.runningPid(name) !== undefined) return undefined;
        return parts.launch(onExit);
      }),
    stopHung: async () => {
      await supervisor.withStartLock(name, parts.stop);
    },
    logTail: (lines) => tails(logFiles, lines),
  };
}

function infraService(c: StandContext, def: ServiceDefinition): KeptService {
  return keptVia(c.supervisor, def.name, def.logFiles, def.needs ?? [], {
    serves: () => serves(c, def),
    launch: (onExit) => launchNow(c, def, { onExit }),
    stop: () => c.supervisor.stop(def.name, def.stopSignal, def.stopGraceMs, { keepWanted: true }),
  });
}

function nodeService(c: StandContext, spec: NodeServiceSpec, needs: string[]): KeptService {
  const supervisor = nodeServiceSupervisor(c, spec.name);
  return keptVia(supervisor, spec.name, [nodeServicePaths(c, spec.name).log], needs, {
    serves: () => answersWithin(() => (spec.alive ? spec.alive() : spec.probe())),
    launch: (onExit) => launchNodeService(c, spec, { onExit }),
    stop: () => supervisor.stop(spec.name, "SIGTERM", spec.stopGraceMs, { keepWanted: true }),
  });
}

/** Every stand service, in start order: `infra` (the stand's list: src/stand/stand.ts, keptInfrastructure),
 * then the loaders and the runners, which need Postgres (and the loaders Kafka); each instance of a
 * pool is a service of its own. */
export function keptServices(c: StandContext, infra: readonly ServiceDefinition[]): KeptService[] {
  return [
    ...infra.map((def) => infraService(c, def)),
    ...loaderInstances(c).map((instance) => nodeService(c, loaderSpec(c, { instance }), ["postgres", "kafka"])),
    ...runnerInstances(c).map((instance) => nodeService(c, runnerSpec(c, instance), ["postgres"])),
  ];
}

