// Typed readers of the ClickHouse and Keeper XML configs in deploy/compose/, for the launcher's
// config test. XML is parsed with fast-xml-parser, then validated with zod, so a test sees
// strings and arrays where it expects them or a message naming the missing element.
import { readFileSync } from "node:fs";
import { XMLParser } from "fast-xml-parser";
import { z } from "zod";

// Elements that may repeat are always arrays, even when the file has one of them. shard and
// replica only as containers: <macros><shard>01</shard> is a single value.
const repeatableContainers = new Set(["shard", "replica", "node", "server"]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  parseTagValue: false, // "01" stays "01": macros and ports are compared as written
  isArray: (tagName: string, _path: unknown, isLeafNode: boolean) =>
    tagName === "query" || (!isLeafNode && repeatableContainers.has(tagName)),
});

const text = z.string().min(1);
const endpoint = z.looseObject({ host: text, port: text });

const clusterSchema = z.looseObject({
  secret: text.optional(),
  shard: z.array(z.looseObject({ internal_replication: text.optional(), replica: z.array(endpoint) })),
});

const serverSchema = z.object({
  clickhouse: z.looseObject({
    remote_servers: z.record(z.string(), z.union([z.string(), clusterSchema])),
    zookeeper: z.looseObject({ node: z.array(endpoint).min(1) }),
    distributed_ddl: z.looseObject({ path: text }),
    access_control_improvements: z.record(z.string(), z.string()).optional(),
  }),
});

const nodeSchema = z.object({
  clickhouse: z.looseObject({
    http_port: text,
    tcp_port: text,
    interserver_http_port: text,
    interserver_http_host: text,
    macros: z.looseObject({ cluster: text, shard: text, replica: text }),
  }),
});

const keeperSchema = z.object({
  clickhouse: z.looseObject({
    keeper_server: z.looseObject({
      tcp_port: text,
      server_id: text,
      four_letter_word_white_list: text.optional(),
      raft_configuration: z.looseObject({ server: z.array(z.looseObject({ id: text })).min(1) }),
    }),
  }),
});

const grantsSchema = z.looseObject({ query: z.array(text) });
const removed = z.object({ "@_remove": z.string() }).strict();
const userSchema = z.looseObject({
  password: z.string(),
  profile: text.optional(),
  access_management: text.optional(),
  grants: grantsSchema.optional(),
});

const accountsSchema = z.object({
  clickhouse: z.looseObject({
    profiles: z.record(z.string(), z.record(z.string(), z.string())).optional(),
    roles: z.record(z.string(), z.looseObject({ grants: grantsSchema })).optional(),
    users: z.record(z.string(), z.union([removed, userSchema])),
  }),
});

export type ClusterConfig = z.infer<typeof clusterSchema>;
export type ServerConfig = z.infer<typeof serverSchema>["clickhouse"];
export type NodeConfig = z.infer<typeof nodeSchema>["clickhouse"];
export type KeeperConfig = z.infer<typeof keeperSchema>["clickhouse"];
export type AccountsConfig = z.infer<typeof accountsSchema>["clickhouse"];
export type UserConfig = z.infer<typeof userSchema>;

function readXml<T>(file: string, schema: z.ZodType<T>): T {
  const parsed: unknown = parser.parse(readFileSync(file, "utf8"));
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
    throw new Error(`${file} does not have the expected elements:\n${problems}`);
  }
  return result.data;
}

/** The root element's children of any XML config, for "which kind of file is this" checks. */
export function xmlRootKeys(file: string): string[] {
  const parsed = z.object({ clickhouse: z.record(z.string(), z.unknown()) }).safeParse(parser.parse(readFileSync(file, "utf8")));
  return parsed.success ? Object.keys(parsed.data.clickhouse) : [];
}

export const readServerXml = (file: string): ServerConfig => readXml(file, serverSchema).clickhouse;
export const readNodeXml = (file: string): NodeConfig => readXml(file, nodeSchema).clickhouse;
export const readKeeperXml = (file: string): KeeperConfig => readXml(file, keeperSchema).clickhouse;
export const readAccountsXml = (file: string): AccountsConfig => readXml(file, accountsSchema).clickhouse;

/** Clusters under remote_servers (attributes such as replace="replace" left out). */
export function clusters(server: ServerConfig): Record<string, ClusterConfig> {
  const entries = Object.entries(server.remote_servers).filter(([key]) => !key.startsWith("@_"));
  return Object.fromEntries(entries.filter((e): e is [string, ClusterConfig] => typeof e[1] !== "string"));
}

/** Declared users, without the ones the file removes (<default remove="remove"/>). */
export function declaredUsers(accounts: AccountsConfig): Record<string, UserConfig> {
  const entries = Object.entries(accounts.users).filter((e): e is [string, UserConfig] => !("@_remove" in e[1]));
  return Object.fromEntries(entries);
}

export const removedUsers = (accounts: AccountsConfig): string[] =>
  Object.entries(accounts.users)
    .filter(([, u]) => "@_remove" in u)
    .map(([name]) => name);

export interface Grant {
  privileges: string[];
  /** "stg.*", "*.*", "system.settings" — or "" for a role grant ("GRANT lifecycle_owner"). */
  on: string;
  query: string;
}

/** Splits "GRANT a, b ON db.*" into its privileges and target; a role grant has no ON. */
export function parseGrant(query: string): Grant {
  const m = /^GRANT\s+(.+?)(?:\s+ON\s+(\S+))?(?:\s+WITH\s+GRANT\s+OPTION)?$/i.exec(query.trim());
  const privileges = (m?.[1] ?? "").split(",").map((p) => p.trim().replace(/\s+/g, " ").toUpperCase());
  return { privileges, on: m?.[2] ?? "", query };
}

export function grantsOf(entity: { grants?: { query: string[] } | undefined }): Grant[] {
  return (entity.grants?.query ?? []).map(parseGrant);
}
