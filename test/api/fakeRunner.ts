// Development-only stand-in for the engine (until src/runner/runner.ts exists). Not used by the final tests.
import {
  ConfValidationError, DagNotFoundError, DagRunNotFoundError, DuplicateRunError, TaskInstanceNotFoundError, TryNotFoundError, VariableNotFoundError,
} from "../../src/runner/errors.ts";
import type { RunnerService } from "../../src/runner/service.ts";
import type { DagRunRecord, DagSummary, TaskInstanceRecord, VariableChange, VariableRecord } from "../../src/runner/types.ts";
import { TERMINAL_RUN_STATES } from "../../src/runner/types.ts";

export function createFakeRunner(): RunnerService & { stop(): void } {
  const dags: DagSummary[] = [
    { dagId: "api_ok", description: "two tasks", schedule: null, isPaused: false, maxActiveRuns: 1, taskIds: ["first", "second"], paramsJsonSchema: { type: "object", properties: { days: { type: "integer" } } }, fileloc: "x" },
    { dagId: "api_fail", description: "fails", schedule: null, isPaused: false, maxActiveRuns: 1, taskIds: ["boom", "after"], paramsJsonSchema: {}, fileloc: "x" },
  ];
  const runs: DagRunRecord[] = [];
  const tis = new Map<string, TaskInstanceRecord[]>();
  const vars = new Map<string, VariableRecord>();
  const history: VariableChange[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const dag = (id: string) => { const d = dags.find((x) => x.dagId === id); if (!d) throw new DagNotFoundError(id); return d; };
  const run = (d: string, r: string) => { dag(d); const x = runs.find((y) => y.dagId === d && y.runId === r); if (!x) throw new DagRunNotFoundError(d, r); return x; };
  const later = (ms: number, fn: () => void) => { const t = setTimeout(() => { timers.delete(t); fn(); }, ms); timers.add(t); };
  return {
    stop() { for (const t of timers) clearTimeout(t); },
    listDags: () => Promise.resolve(dags),
    getDag: (id) => Promise.resolve(dag(id)),
    setPaused: (id, p) => { dag(id).isPaused = p; return Promise.resolve(dag(id)); },
    triggerRun(dagId, req) {
      const d = dag(dagId);
      if (req.conf && "days" in req.conf && typeof req.conf.days !== "number") return Promise.reject(new ConfValidationError(dagId, "days", "expected integer"));
      const runId = req.runId ?? `manual__${new Date().toISOString()}`;
      if (runs.some((r) => r.dagId === dagId && r.runId === runId)) return Promise.reject(new DuplicateRunError(dagId, runId));
      const r: DagRunRecord = { dagId, runId, state: "queued", runType: "manual", conf: req.conf ?? {}, logicalDate: req.logicalDate ?? null, queuedAt: new Date(), startDate: null, endDate: null, note: req.note ?? null, manifest: d.taskIds, parentDagId: null, parentRunId: null, parentTaskId: null, triggeredBy: req.triggeredBy };
      runs.push(r);
      const list: TaskInstanceRecord[] = d.taskIds.map((taskId) => ({ dagId, runId, taskId, state: "scheduled", tryNumber: 0, maxTries: 1, startDate: null, endDate: null, durationMs: null, worker: null, error: null, childDagId: null, childRunId: null }));
      tis.set(`${dagId}/${runId}`, list);
      const fail = dagId === "api_fail";
      later(100, () => { r.state = "running"; r.startDate = new Date(); const t = list[0]!; t.state = "running"; t.tryNumber = 1; t.startDate = new Date(); });
      later(300, () => {
        const t = list[0]!; t.endDate = new Date(); t.durationMs = 200;
        if (fail) { t.state = "failed"; t.error = "boom"; list[1]!.state = "upstream_failed"; r.state = "failed"; r.endDate = new Date(); return; }
        t.state = "success"; const u = list[1]!; u.state = "running"; u.tryNumber = 1; u.startDate = new Date();
      });
      if (!fail) later(500, () => { const u = list[1]!; u.state = "success"; u.endDate = new Date(); u.durationMs = 200; r.state = "success"; r.endDate = new Date(); });
      return Promise.resolve(r);
    },
    getRun: (d, r) => Promise.resolve(run(d, r)),
    listRuns(d, q) { dag(d); const all = runs.filter((r) => r.dagId === d && (!q.state || r.state === q.state)); return Promise.resolve({ items: all.slice(q.offset, q.offset + q.limit), totalEntries: all.length }); },
    listTaskInstances: (d, r) => { run(d, r); return Promise.resolve(tis.get(`${d}/${r}`) ?? []); },
    getTaskLog(d, r, t, n) {
      run(d, r); const ti = (tis.get(`${d}/${r}`) ?? []).find((x) => x.taskId === t);
      if (!ti) return Promise.reject(new TaskInstanceNotFoundError(d, r, t));
      if (n > ti.tryNumber) return Promise.reject(new TryNotFoundError(d, r, t, n));
      return Promise.resolve({ dagId: d, runId: r, taskId: t, tryNumber: n, lines: [{ at: new Date(), level: "info", message: `hello from ${t} try ${n}` }] });
    },
    async waitForRun(d, r, o) {
      const end = Date.now() + o.timeoutMs;
      for (;;) { const x = run(d, r); if (TERMINAL_RUN_STATES.has(x.state) || Date.now() >= end || o.signal?.aborted) return x; await new Promise((res) => setTimeout(res, 20)); }
    },
    listVariables: (q) => { const all = [...vars.values()]; return Promise.resolve({ items: all.slice(q.offset, q.offset + q.limit), totalEntries: all.length }); },
    getVariable: (k) => { const v = vars.get(k); return v ? Promise.resolve(v) : Promise.reject(new VariableNotFoundError(k)); },
    setVariable(k, value, meta) { const old = vars.get(k); const v = { key: k, value, description: meta.description === undefined ? (old?.description ?? null) : meta.description, updatedAt: new Date() }; vars.set(k, v); history.push({ key: k, oldValue: old?.value ?? null, newValue: value, changedAt: new Date(), changedBy: meta.changedBy, dagId: null, runId: null }); return Promise.resolve(v); },
    deleteVariable(k, meta) { const old = vars.get(k); if (!old) return Promise.reject(new VariableNotFoundError(k)); vars.delete(k); history.push({ key: k, oldValue: old.value, newValue: null, changedAt: new Date(), changedBy: meta.changedBy, dagId: null, runId: null }); return Promise.resolve(); },
    variableHistory: (k) => Promise.resolve(history.filter((h) => h.key === k)),
    health: () => Promise.resolve({ metadatabase: "healthy", scheduler: "healthy", latestHeartbeat: new Date() }),
  };
}
