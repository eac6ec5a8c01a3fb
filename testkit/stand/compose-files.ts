// Reads the Docker launcher's files (docker-compose.yml, the stand configs, the Dockerfile) into
// validated, typed values for test/config/compose.test.ts. Nothing here talks to a service.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { parseStandConfig, repoRoot, type StandConfig } from "../../src/config/index.ts";

export const composeFile = path.join(repoRoot, "docker-compose.yml");

/** Where the runner image keeps the repository (Dockerfile WORKDIR). */
export const imageAppDir = "/app";

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const stringList = z.union([z.string().min(1), z.array(z.string()).min(1)]);

const healthcheckSchema = z
  .object({
    test: stringList,
    interval: z.string().optional(),
    timeout: z.string().optional(),
    retries: z.number().int().positive().optional(),
    start_period: z.string().optional(),
    start_interval: z.string().optional(),
    disable: z.boolean().optional(),
  })
  .strict();

const dependencySchema = z
  .object({
    condition: z.enum(["service_started", "service_healthy", "service_completed_successfully"]),
    restart: z.boolean().optional(),
    required: z.boolean().optional(),
  })
  .strict();

// Strict on purpose: a key this schema does not know is a change to the launcher that someone
// should look at (and add here), not something to pass silently. `profiles` is accepted by the
// shape only so that its own assertion can name the service that uses it.
const serviceSchema = z
  .object({
    image: z.string().min(1).optional(),
    build: z
      .object({ context: z.string().min(1), dockerfile: z.string().min(1).optional() })
      .strict()
      .optional(),
    hostname: z.string().min(1).optional(),
    restart: z.enum(["no", "always", "on-failure", "unless-stopped"]).optional(),
    command: stringList.optional(),
    entrypoint: stringList.optional(),
    environment: z.record(z.string(), scalar).optional(),
    ports: z.array(z.string()).optional(),
    volumes: z.array(z.string()).optional(),
    depends_on: z.record(z.string(), dependencySchema).optional(),
    healthcheck: healthcheckSchema.optional(),
    networks: z.array(z.string()).optional(),
    ulimits: z
      .record(z.string(), z.union([z.number(), z.object({ soft: z.number(), hard: z.number() }).strict()]))
      .optional(),
    mem_limit: z.union([z.string(), z.number()]).optional(),
    stop_grace_period: z.string().regex(/^\d+(ms|s|m)$/).optional(),
    group_add: z.array(z.union([z.string(), z.number()])).optional(),
    user: z.string().optional(),
    profiles: z.array(z.string()).optional(),
    deploy: z.object({ replicas: z.number().int().min(1) }).strict().optional(),
  })
  .strict();

const composeSchema = z
  .object({
    name: z.string().min(1),
    services: z.record(z.string(), serviceSchema),
    networks: z.record(z.string(), z.object({ name: z.string().optional() }).strict().nullable()),
    volumes: z.record(z.string(), z.object({}).strict().nullable()),
  })
  .strict();

export type ComposeFile = z.infer<typeof composeSchema>;
export type ComposeService = z.infer<typeof serviceSchema>;

export interface LoadedCompose {
  /** The document exactly as YAML gave it, for checks that must see every key. */
  raw: unknown;
  compose: ComposeFile;
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n");
}

export function loadCompose(file: string = composeFile): LoadedCompose {
  const raw: unknown = parseYaml(readFileSync(file, "utf8"));
  const result = composeSchema.safeParse(raw);
  if (!result.success) throw new Error(`${file} has an unexpected shape:\n${formatIssues(result.error)}`);
  return { raw, compose: result.data };
}

/** A service by name, failing with the list of services there are. */
export function service(compose: ComposeFile, name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`service ${name} missing; services: ${Object.keys(compose.services).join(", ")}`);
  return found;
}

export interface PortMapping {
  hostIp: string;
  /** The first published port (of a range for replicas: "127.0.0.1:28080-28081:28080"). */
  published: number;
  /** How many host ports the range has: one per replica; 1 for a single port. */
  publishedCount: number;
  target: number;
}

/** Parses the short port syntax; only the explicit "ip:published:target" form (published may be a range) is accepted. */
export function parsePort(spec: string): PortMapping | undefined {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d+)(?:-(\d+))?:(\d+)(?:\/tcp)?$/.exec(spec);
  if (!m?.[1] || !m[2] || !m[4]) return undefined;
  const last = m[3] === undefined ? Number(m[2]) : Number(m[3]);
  return { hostIp: m[1], published: Number(m[2]), publishedCount: last - Number(m[2]) + 1, target: Number(m[4]) };
}

export interface VolumeMount {
  source: string;
  target: string;
  readOnly: boolean;
  /** True for a path on the host (./x, /x), false for a named volume. */
  bind: boolean;
}

export function parseVolume(spec: string): VolumeMount {
  const [source = "", target = "", mode = ""] = spec.split(":");
  return { source, target, readOnly: mode === "ro", bind: source.startsWith(".") || source.startsWith("/") };
}

/** The host file behind a bind mount whose source is relative to the compose file. */
export function bindSourcePath(mount: VolumeMount): string {
  return path.resolve(path.dirname(composeFile), mount.source);
}

export function environment(svc: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(svc.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** The healthcheck command as one string, for "does it probe port N" checks. */
export function healthcheckCommand(svc: ComposeService): string {
  const test = svc.healthcheck?.test;
  if (test === undefined) return "";
  return typeof test === "string" ? test : test.join(" ");
}

export interface ImageRef {
  repository: string;
  tag: string;
}

export function parseImage(image: string | undefined): ImageRef {
  const at = image?.lastIndexOf(":") ?? -1;
  if (!image || at <= 0) return { repository: image ?? "", tag: "" };
  return { repository: image.slice(0, at), tag: image.slice(at + 1) };
}

/** Every key anywhere in a YAML document, with its path, for checks like "no profiles anywhere". */
export function keyPaths(node: unknown, prefix = ""): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => keyPaths(item, `${prefix}[${i}]`));
  if (node === null || typeof node !== "object") return [];
  return Object.entries(node as Record<string, unknown>).flatMap(([key, value]) => {
    const here = prefix ? `${prefix}.${key}` : key;
    return [here, ...keyPaths(value, here)];
  });
}

export function loadStandYaml(file: string): StandConfig {
  return parseStandConfig(readFileSync(file, "utf8"), file);
}

/** The host copy of the stand config the runner container is given through STAND_CONFIG. */
export function runnerStandConfigPath(svc: ComposeService): string {
  const inImage = environment(svc).STAND_CONFIG ?? "";
  if (!inImage.startsWith(`${imageAppDir}/`)) {
    throw new Error(`runner STAND_CONFIG must point inside ${imageAppDir}, got "${inImage}"`);
  }
  return path.join(repoRoot, path.relative(imageAppDir, inImage));
}

/** Dockerfile instructions in order, continuation lines joined. */
export function dockerfileInstructions(file: string): { op: string; args: string }[] {
  if (!existsSync(file)) return [];
  const joined = readFileSync(file, "utf8").replace(/\\\r?\n/g, " ");
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const space = line.search(/\s/);
      return space < 0
        ? { op: line.toUpperCase(), args: "" }
        : { op: line.slice(0, space).toUpperCase(), args: line.slice(space).trim() };
    });
}

/** The entries of an ignore file, comments and blanks dropped. */
export function ignoreEntries(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}
