// A ClickHouse 18.16 server of a test's own (Debian's clickhouse-server), in a temp dir, on free
// ports of 127.0.0.1, under a supervisor that starts it again whenever its process exits: the only
// place a test may kill a server for real (the test stands' nodes are shared). Stopped and its dir
// removed by stop(); it kills only the process it started, by its pid.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";

export interface PrivateClickHouse {
  url: string;
  client: ClickHouseClient;
  /** Times the server's process exited without stop() and was started again. */
  deaths(): number;
  pid(): number | undefined;
  answers(): Promise<boolean>;
  waitUntilAnswering(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function config(dir: string, http: number, tcp: number, interserver: number): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${http}</http_port><tcp_port>${tcp}</tcp_port><interserver_http_port>${interserver}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <max_connections>64</max_connections><keep_alive_timeout>3</keep_alive_timeout><max_concurrent_queries>20</max_concurrent_queries>
  <uncompressed_cache_size>67108864</uncompressed_cache_size><mark_cache_size>67108864</mark_cache_size>
  <path>${dir}/data/</path><tmp_path>${dir}/data/tmp/</tmp_path><user_files_path>${dir}/data/user_files/</user_files_path>
  <format_schema_path>${dir}/data/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <timezone>UTC</timezone><mlock_executable>false</mlock_executable>
</yandex>
`;
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;

export async function startPrivateClickHouse(): Promise<PrivateClickHouse> {
  const dir = mkdtempSync(path.join(tmpdir(), "loader-private-ch-"));
  const [http, tcp, interserver] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(path.join(dir, "config.xml"), config(dir, http, tcp, interserver));
  writeFileSync(path.join(dir, "users.xml"), USERS);
  const url = `http://127.0.0.1:${http}`;
  const client = createClient({ url, request_timeout: 30_000, compression: { request: false, response: false }, log: { level: ClickHouseLogLevel.OFF } });
  let child: ChildProcess | undefined;
  let stopping = false;
  let deaths = 0;
  const start = () => {
    child = spawn("clickhouse-server", [`--config-file=${path.join(dir, "config.xml")}`], { stdio: "ignore" });
    child.once("exit", () => {
      if (stopping) return;
      deaths++;
      start();
    });
  };
  const answers = async () => {
    try {
      const r = await fetch(`${url}/?query=SELECT%201`, { signal: AbortSignal.timeout(1000) });
      return (await r.text()).trim() === "1";
    } catch {
      return false;
    }
  };
  const waitUntilAnswering = async (timeoutMs: number) => {
    const until = Date.now() + timeoutMs;
    while (!(await answers())) {
      if (Date.now() > until) throw new Error(`private ClickHouse at ${url} (${dir}) did not answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  start();
  await waitUntilAnswering(30_000);
  return {
    url,
    client,
    deaths: () => deaths,
    pid: () => child?.pid,
    answers,
    waitUntilAnswering,
    stop: async () => {
      stopping = true;
      await client.close();
      const running = child;
      if (running?.pid !== undefined && running.exitCode === null) {
        const exited = new Promise((resolve) => running.once("exit", resolve));
        running.kill("SIGTERM");
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (running.exitCode === null) running.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
