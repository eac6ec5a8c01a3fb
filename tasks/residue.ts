// What a stopped creation leaves behind: world_initialize decides to create (position 0 or unset)
// and finds databases, topics or consumer groups of a world already there. By the position table
// such a world never finished (or its position was deleted by hand), so it is cleared first, in
// world_recreate's order (the loader stopped, so it leaves its groups; databases; groups; topics),
// and the creation that follows starts from nothing: the same input, the same world.
import { loadStandConfig } from "../src/config/index.ts";
import { setIngest } from "../src/loader/index.ts";
import { readLiveCatalogue, WORLD_CONSUMER_GROUPS, WORLD_TOPICS, type TaskIo, unreachableError } from "../src/world/index.ts";
import { deleteConsumerGroups } from "./consumer-groups.ts";
import { dropApplicationDatabases } from "./databases.ts";
import { withKafkaAdmin } from "./kafka-admin.ts";
import { deleteTopics } from "./topics.ts";

export interface Residue {
  databases: string[];
  topics: string[];
  groups: string[];
}

/** What of a world exists: databases on any node (every node is read; one that does not answer is an
 * error, since its residue would stay), the world's topics and its consumer groups. */
export async function findResidue(): Promise<Residue> {
  const config = loadStandConfig();
  const live = await readLiveCatalogue(config);
  const unreachable = unreachableError("clear_residue", live.unreachable);
  if (unreachable) throw unreachable;
  const databases = [...new Set(Object.values(live.databases).flat())].sort();
  const names = WORLD_TOPICS.map((t) => t.name);
  const { topics, groups } = await withKafkaAdmin({ config }, "world-residue", async (admin) => ({
    topics: (await admin.listTopics()).filter((t) => names.includes(t)).sort(),
    groups: (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => WORLD_CONSUMER_GROUPS.includes(g)).sort(),
  }));
  return { databases, topics, groups };
}

/** Clears a stopped creation's residue; returns what was found (empty lists: nothing to clear). */
export async function clearCreationResidue(io: TaskIo, requestedBy: string): Promise<Residue> {
  const residue = await findResidue();
  const found = [...residue.databases.map((d) => `database ${d}`), ...residue.topics.map((t) => `topic ${t}`), ...residue.groups.map((g) => `group ${g}`)];
  if (found.length === 0) {
    io.log("no residue: nothing of a world exists yet");
    return residue;
  }
  io.log(`residue of a creation that did not finish (the position says there is no world): ${found.join(", ")}; clearing it first`);
  await setIngest({ ...io, desired: "stopped", requestedBy });
  await dropApplicationDatabases(io);
  await deleteConsumerGroups(io);
  await deleteTopics(io);
  return residue;
}
