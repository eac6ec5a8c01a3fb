// Page actions: the trigger forms and pause switches. They POST JSON to this runner's own
// /ui/actions endpoints (same origin; the bearer token never reaches the browser, see docs/web.md)
// and show the server's errors beside the field. Data reaches the DOM only as text.
import { readConf } from "./conf-check.ts";
import type { PauseAnswer, ProblemAnswer, RunActionAnswer, TriggerAnswer } from "./views.ts";

/** An action the server refused: its problem's detail, and the field it names when it names one. */
class ActionError extends Error {
  constructor(
    message: string,
    readonly field: string | undefined,
  ) {
    super(message);
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The answer of a successful action; its shape is the action route's (src/web/actions.ts). */
async function postAction<Answer>(url: string, body: unknown): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const answer: unknown = await response.json().catch(() => ({}));
  if (!response.ok) {
    const problem = problemOf(answer);
    throw new ActionError(problem.detail ?? `${response.status} ${response.statusText}`, problem.field);
  }
  return answer as Answer;
}

/** The problem JSON's fields, from whatever the failed action answered (maybe not JSON at all). */
function problemOf(answer: unknown): ProblemAnswer {
  const { detail, field } = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  return { detail: typeof detail === "string" ? detail : undefined, field: typeof field === "string" ? field : undefined };
}

function showFieldError(textarea: HTMLTextAreaElement, errorNode: Element, text: string): void {
  errorNode.textContent = text;
  if (text) textarea.setAttribute("aria-invalid", "true");
  else textarea.removeAttribute("aria-invalid");
}

function wireTriggerForm(form: HTMLFormElement, onStateChanged: () => void): void {
  const textarea = form.querySelector("textarea");
  const errorNode = form.querySelector(".conf-error");
  const result = form.querySelector(".trigger-result");
  const button = form.querySelector("button");
  const action = form.dataset.action;
  // renderTriggerForm (src/web/pages/dag-controls.ts) always renders all of them.
  if (!textarea || !errorNode || !result || !button || !action) return;
  let schema: unknown = {};
  try {
    schema = JSON.parse(form.dataset.paramsSchema || "{}");
  } catch {
    // a malformed schema attribute: the form checks nothing, the server still validates
    schema = {};
  }
  textarea.addEventListener("input", () => showFieldError(textarea, errorNode, readConf(textarea.value, schema).problem ?? ""));

  const submit = async (): Promise<void> => {
    result.replaceChildren();
    const reading = readConf(textarea.value, schema);
    showFieldError(textarea, errorNode, reading.problem ?? "");
    if (reading.problem !== undefined) return;
    button.disabled = true;
    try {
      const run = await postAction<TriggerAnswer>(action, { conf: reading.conf });
      const link = document.createElement("a");
      link.href = run.href;
      link.className = "new-run-link";
      link.textContent = run.dag_run_id;
      result.replaceChildren("triggered ", link);
      onStateChanged();
    } catch (err) {
      showFieldError(textarea, errorNode, messageOf(err));
    } finally {
      button.disabled = false;
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });
}

function wirePauseSwitch(input: HTMLInputElement, onStateChanged: () => void): void {
  const action = input.dataset.action;
  if (!action) return; // renderPauseSwitch always sets it
  const toggle = async (): Promise<void> => {
    const wantPaused = !input.checked;
    const errorNode = input.closest("td, div")?.querySelector(".pause-error");
    const label = input.parentElement?.querySelector(".switch-label");
    input.disabled = true;
    try {
      const dag = await postAction<PauseAnswer>(action, { is_paused: wantPaused });
      input.checked = !dag.is_paused;
      if (label) label.textContent = dag.is_paused ? "paused" : "active";
      if (errorNode) errorNode.textContent = "";
      if (!dag.is_paused) onStateChanged(); // queued runs may start now
    } catch (err) {
      input.checked = wantPaused; // back to what the server still has
      if (errorNode) errorNode.textContent = messageOf(err);
    } finally {
      input.disabled = false;
    }
  };
  input.addEventListener("change", () => void toggle());
}

/** A run page's buttons: mark failed / success, clear failed tasks. The answer's message is shown beside them. */
function wireRunAction(button: HTMLButtonElement, onStateChanged: () => void): void {
  const action = button.dataset.action;
  const result = button.parentElement?.querySelector(".run-action-result");
  if (!action || !result) return;
  let body: unknown = {};
  try {
    body = JSON.parse(button.dataset.body ?? "{}");
  } catch {
    // a malformed body attribute: send an empty body, the server answers what is missing
    body = {};
  }
  const press = async (): Promise<void> => {
    button.disabled = true;
    try {
      const answer = await postAction<RunActionAnswer>(action, body);
      result.textContent = answer.message;
      onStateChanged();
    } catch (err) {
      result.textContent = messageOf(err);
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener("click", () => void press());
}

/** Wires every trigger form and pause switch on the page; onStateChanged runs after a change. */
export function wirePageActions(onStateChanged: () => void): void {
  for (const form of document.querySelectorAll("form.trigger-form")) {
    if (form instanceof HTMLFormElement) wireTriggerForm(form, onStateChanged);
  }
  for (const button of document.querySelectorAll("button.run-action")) {
    if (button instanceof HTMLButtonElement) wireRunAction(button, onStateChanged);
  }
  for (const input of document.querySelectorAll("input.pause-switch")) {
    if (input instanceof HTMLInputElement) wirePauseSwitch(input, onStateChanged);
  }
}
