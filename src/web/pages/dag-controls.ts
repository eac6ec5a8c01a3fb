// What the DAG list and the DAG page share: a DAG's identity, its pause switch, and the trigger
// form whose conf editor is checked against the DAG's params JSON Schema in the page (browser/
// conf-check.ts) and again by the server when the run is created.
import type { DagSummary, JsonValue } from "../../runner/index.ts";
import { html, webPaths, type SafeHtml } from "../html.ts";

export interface DagControlsView {
  dagId: string;
  description: string;
  schedule: string | null;
  isPaused: boolean;
  maxActiveRuns: number;
  href: string;
  pauseAction: string;
  triggerAction: string;
  paramsSchema: JsonValue;
}

export function dagControlsView(dag: DagSummary): DagControlsView {
  return {
    dagId: dag.dagId,
    description: dag.description,
    schedule: dag.schedule,
    isPaused: dag.isPaused,
    maxActiveRuns: dag.maxActiveRuns,
    href: webPaths.dag(dag.dagId),
    pauseAction: webPaths.pauseAction(dag.dagId),
    triggerAction: webPaths.triggerAction(dag.dagId),
    paramsSchema: dag.paramsJsonSchema,
  };
}

/** On = the DAG runs (unpaused), as in Airflow's toggle. */
export function renderPauseSwitch(dag: DagControlsView): SafeHtml {
  return html`<label class="switch">
    <input type="checkbox" role="switch" class="pause-switch" data-dag="${dag.dagId}" data-action="${dag.pauseAction}"
      aria-label="${dag.dagId} runs (unpaused)"${dag.isPaused ? "" : html` checked`}>
    <span class="switch-label">${dag.isPaused ? "paused" : "active"}</span>
  </label>
  <span class="field-error pause-error" role="alert"></span>`;
}

function asObject(value: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

/** A short list of the params a DAG accepts, read from its JSON Schema, as a hint under the editor. */
function paramsHint(schema: JsonValue): SafeHtml {
  const properties = asObject(asObject(schema)?.properties);
  if (!properties) return html`<span class="hint">any JSON object</span>`;
  const requiredList = asObject(schema)?.required;
  const required = new Set(Array.isArray(requiredList) ? requiredList.filter((name) => typeof name === "string") : []);
  const names = Object.entries(properties).map(([name, spec]) => {
    const type = asObject(spec)?.type;
    return html`<code>${name}</code>: ${typeof type === "string" ? type : "any"}${required.has(name) ? " (required)" : ""}`;
  });
  if (names.length === 0) return html`<span class="hint">no params: conf must be {}</span>`;
  return html`<span class="hint">params: ${names.map((name, i) => (i === 0 ? name : html`, ${name}`))}</span>`;
}

export function renderTriggerForm(dag: DagControlsView): SafeHtml {
  const fieldId = `conf-${dag.dagId}`;
  return html`<details class="trigger">
  <summary>Trigger…</summary>
  <form class="trigger-form" data-dag="${dag.dagId}" data-action="${dag.triggerAction}"
    data-params-schema="${JSON.stringify(dag.paramsSchema)}" novalidate>
    <label for="${fieldId}">conf (JSON object)</label>
    <div class="field-row">
      <textarea id="${fieldId}" name="conf" rows="4" cols="40" spellcheck="false"
        aria-describedby="${fieldId}-error">{}</textarea>
      <span id="${fieldId}-error" class="field-error conf-error" role="alert"></span>
    </div>
    ${paramsHint(dag.paramsSchema)}
    <div><button type="submit">Trigger run</button> <span class="trigger-result" role="status"></span></div>
  </form>
</details>`;
}
