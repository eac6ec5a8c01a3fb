import { runBatch } from "../generator/src/play.ts";
import { silentLogger } from "../generator/src/log.ts";
for (let i = 0; i < 4; i++) {
  const t = performance.now();
  const r = await runBatch({ seed: 20260601, day: 0, days: 8, limit: Infinity, output: { kind: "kafka", brokers: ["127.0.0.1:29092"], topic: "gen-try", producer: "wire", batchSize: 5000, batchBytes: 900000, inFlight: +(process.argv[2] ?? 4) } }, silentLogger);
  console.log(Math.round(r.sent / ((performance.now() - t) / 1000)), "ev/s", "inner", Math.round(r.sent / r.seconds));
}
