// What a stopped creation leaves behind: world_initialize decides to create (position 0 or unset)
// and finds databases, topics or consumer groups of a world already there. By the position table
// such a world never finished (or its position was deleted by hand), so it is cleared first, in
// world_recreate's order (databases, so the Kafka readers go; groups; topics), and the creation that
// follows starts from nothing: the same input, the same world.
import { connectClickHouse } from "../src/clickhouse/client.ts";
import { quoteString } from "../src/clickhouse/sql.ts";
import { loadStandConfig } from "../src/config/stand.ts";
import { APPLICATION_DATABASES, WORLD_CONSUMER_GROUPS, WORLD_TOPICS } from "../src/world/constants.ts";
import type { TaskIo } from "../src/world/io.ts";
import { deleteConsumerGroups } from "./consumer-groups.ts";
import { dropApplicationDatabases } from "./databases.ts";
import { withKafkaAdmin } from "./kafka-admin.ts";
import { deleteTopics } from "./topics.ts";

export interface Residue {
  databases: string[];
  topics: string[];
  groups: string[];
}

export async function findResidue(): Promise<Residue> {
  const config = loadStandConfig();
  const ch = connectClickHouse({ account: "lifecycle", config, requestTimeoutMs: 30_000 });
  let databases: string[];
  try {
    const rows = await ch.query<{ name: string }>(
      `SELECT name FROM system.databases WHERE name IN (${APPLICATION_DATABASES.map(quoteString).join(", ")}) ORDER BY name`,
    );
    databases = rows.map((r) => r.name);
  } finally {
    await ch.close();
  }
  const names = WORLD_TOPICS.map((t) => t.name);
  const { topics, groups } = await withKafkaAdmin({ config }, "world-residue", async (admin) => ({
    topics: (await admin.listTopics()).filter((t) => names.includes(t)).sort(),
    groups: (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => WORLD_CONSUMER_GROUPS.includes(g)).sort(),
  }));
  return { databases, topics, groups };
}

/** Clears a stopped creation's residue; returns what was found (empty lists: nothing to clear). */
export async function clearCreationResidue(io: TaskIo): Promise<Residue> {
  const residue = await findResidue();
  const found = [...residue.databases.map((d) => `database ${d}`), ...residue.topics.map((t) => `topic ${t}`), ...residue.groups.map((g) => `group ${g}`)];
  if (found.length === 0) {
    io.log("no residue: nothing of a world exists yet");
    return residue;
  }
  io.log(`residue of a creation that did not finish (the position says there is no world): ${found.join(", ")}; clearing it first`);
  await dropApplicationDatabases(io);
  await deleteConsumerGroups(io);
  await deleteTopics(io);
  return residue;
}
