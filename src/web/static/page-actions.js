// Page actions: the trigger forms and pause switches. They POST JSON to this runner's own
// /ui/actions endpoints (same origin; the bearer token never reaches the browser, see docs/web.md)
// and show the server's errors beside the field. Data reaches the DOM only as text.
import { readConf } from "./conf-check.js";


async function postAction(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(answer.detail ?? `${response.status} ${response.statusText}`), { field: answer.field });
  return answer;
}

function showFieldError(textarea, errorNode, text) {
  errorNode.textContent = text;
  if (text) textarea.setAttribute("aria-invalid", "true");
  else textarea.removeAttribute("aria-invalid");
}

function wireTriggerForm(form, onStateChanged) {
  const textarea = form.querySelector("textarea");
  const errorNode = form.querySelector(".conf-error");
  const result = form.querySelector(".trigger-result");
  let schema = {};
  try {
    schema = JSON.parse(form.dataset.paramsSchema || "{}");
  } catch {
    schema = {};
  }
  textarea.addEventListener("input", () => showFieldError(textarea, errorNode, readConf(textarea.value, schema).problem ?? ""));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    result.replaceChildren();
    const { conf, problem } = readConf(textarea.value, schema);
    showFieldError(textarea, errorNode, problem ?? "");
    if (problem) return;
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const run = await postAction(form.dataset.action, { conf });
      const link = document.createElement("a");
      link.href = run.href;
      link.className = "new-run-link";
      link.textContent = run.dag_run_id;
      result.replaceChildren("triggered ", link);
      onStateChanged();
    } catch (err) {
      showFieldError(textarea, errorNode, err.message);
    } finally {
      button.disabled = false;
    }
  });
}

function wirePauseSwitch(input, onStateChanged) {
  input.addEventListener("change", async () => {
    const wantPaused = !input.checked;
    const errorNode = input.closest("td, div")?.querySelector(".pause-error");
    const label = input.parentElement?.querySelector(".switch-label");
    input.disabled = true;
    try {
      const dag = await postAction(input.dataset.action, { is_paused: wantPaused });
      input.checked = !dag.is_paused;
      if (label) label.textContent = dag.is_paused ? "paused" : "active";
      if (errorNode) errorNode.textContent = "";
      if (!dag.is_paused) onStateChanged(); // queued runs may start now
    } catch (err) {
      input.checked = wantPaused; // back to what the server still has
      if (errorNode) errorNode.textContent = err.message;
    } finally {
      input.disabled = false;
    }
  });
}

/** Wires every trigger form and pause switch on the page; onStateChanged runs after a change. */
export function wirePageActions(onStateChanged) {
  document.querySelectorAll("form.trigger-form").forEach((form) => wireTriggerForm(form, onStateChanged));
  document.querySelectorAll("input.pause-switch").forEach((input) => wirePauseSwitch(input, onStateChanged));
}
