"""Drives the runner's API with the official Python client, apache-airflow-client (pinned in
requirements.txt), the way an Airflow user would: log in, list/get/details, pause/unpause, trigger
and poll, task instances, logs (with the continuation token), variables (bulk too), mark a run
failed, mark a task instance, clear a task, health, version, dagStats, dagSources, importErrors.

Run by test/clients/airflow-clients.test.ts with the venv's python; prints one JSON document:
{"calls": [{"call": ..., "ok": bool, "error": ...}], "facts": {...}}. A call that raises (a refused
model, an HTTP error) is recorded as not ok, and the flow goes on where it can.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request

import airflow_client.client as af
from airflow_client.client.exceptions import ApiException
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.dag_source_api import DagSourceApi
from airflow_client.client.api.dag_stats_api import DagStatsApi
from airflow_client.client.api.import_error_api import ImportErrorApi
from airflow_client.client.api.monitor_api import MonitorApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.api.variable_api import VariableApi
from airflow_client.client.api.version_api import VersionApi
from airflow_client.client.models.bulk_body_variable_body import BulkBodyVariableBody
from airflow_client.client.models.clear_task_instances_body import ClearTaskInstancesBody
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.dag_run_patch_body import DAGRunPatchBody
from airflow_client.client.models.patch_task_instance_body import PatchTaskInstanceBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody
from airflow_client.client.models.variable_body import VariableBody

BASE = os.environ["AIRFLOW_BASE_URL"]
calls: list[dict] = []
facts: dict = {}


def record(name, fn):
    try:
        result = fn()
        calls.append({"call": name, "ok": True})
        return result
    except Exception as err:  # noqa: BLE001 - every failure is the finding
        calls.append({"call": name, "ok": False, "error": f"{type(err).__name__}: {str(err)[:600]}"})
        return None


def login() -> str:
    body = json.dumps({"username": os.environ["AIRFLOW_USER"], "password": os.environ["AIRFLOW_PASSWORD"]}).encode()
    request = urllib.request.Request(f"{BASE}/auth/token", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)["access_token"]


def events(log) -> list[str]:
    """The messages of a TaskInstancesLogResponse (its content is structured messages or strings)."""
    items = log.content.actual_instance if hasattr(log.content, "actual_instance") else log.content
    return [item if isinstance(item, str) else item.event for item in items]


def first_log_lines(tis: TaskInstanceApi, dag_id: str, run_id: str, task_id: str, timeout: float = 20.0):
    """The first page of try 1's log that holds a line, read again until one is there."""
    deadline = time.time() + timeout
    while True:
        try:
            page = tis.get_log(dag_id, run_id, task_id, 1)
            if events(page) or time.time() > deadline:
                return page
        except ApiException:
            if time.time() > deadline:
                raise
        time.sleep(0.1)


def poll(runs: DagRunApi, dag_id: str, run_id: str, timeout: float = 30.0, interval: float = 0.2):
    """A run once it has ended, read every interval seconds (or as it is at the timeout)."""
    deadline = time.time() + timeout
    while True:
        run = runs.get_dag_run(dag_id, run_id)
        if run.state.value in ("success", "failed") or time.time() > deadline:
            return run
        time.sleep(interval)


def main() -> None:
    token = record("POST /auth/token", login)
    client = af.ApiClient(af.Configuration(host=BASE, access_token=token))
    dags, runs, tis, variables = DAGApi(client), DagRunApi(client), TaskInstanceApi(client), VariableApi(client)

    listed = record("get_dags", lambda: dags.get_dags())
    facts["dag_ids"] = [d.dag_id for d in listed.dags] if listed else None
    dag = record("get_dag", lambda: dags.get_dag("api_ok"))
    facts["file_token"] = dag.file_token if dag else None
    details = record("get_dag_details", lambda: dags.get_dag_details("api_ok"))
    facts["details_params"] = sorted(details.params.keys()) if details and details.params else None
    paused = record("patch_dag (pause)", lambda: dags.patch_dag("api_ok", DAGPatchBody(is_paused=True), update_mask=["is_paused"]))
    facts["paused"] = paused.is_paused if paused else None
    unpaused = record("patch_dag (unpause)", lambda: dags.patch_dag("api_ok", DAGPatchBody(is_paused=False)))
    facts["unpaused"] = unpaused.is_paused if unpaused else None

    triggered = record("trigger_dag_run", lambda: runs.trigger_dag_run("api_ok", TriggerDAGRunPostBody(logical_date=None, conf={"days": 2})))
    if triggered:
        facts["triggering_user_name"] = triggered.triggering_user_name
        done = record("get_dag_run (poll)", lambda: poll(runs, "api_ok", triggered.dag_run_id))
        facts["ok_run_state"] = done.state.value if done else None
        page = record("get_dag_runs", lambda: runs.get_dag_runs("api_ok", limit=10, order_by=["-run_after"], state=["success"]))
        facts["listed_runs"] = page.total_entries if page else None
        listed_tis = record("get_task_instances", lambda: tis.get_task_instances("api_ok", triggered.dag_run_id))
        facts["task_states"] = {t.task_id: t.state.value for t in listed_tis.task_instances} if listed_tis else None
        one = record("get_task_instance", lambda: tis.get_task_instance("api_ok", triggered.dag_run_id, "first"))
        facts["task_try"] = one.try_number if one else None
        log = record("get_log", lambda: tis.get_log("api_ok", triggered.dag_run_id, "first", 1))
        facts["log_events"] = events(log) if log else None
        facts["log_token"] = log.continuation_token if log else "missing"
        stats = record("get_dag_stats", lambda: DagStatsApi(client).get_dag_stats(dag_ids=["api_ok"]))
        facts["stats_success"] = next((s.count for s in stats.dags[0].stats if s.state.value == "success"), None) if stats else None

    # hold_first_try: the first try naps until the run is marked, so it is running for every read below
    slow = record(
        "trigger_dag_run (slow)",
        lambda: runs.trigger_dag_run("api_slow", TriggerDAGRunPostBody(logical_date=None, conf={"hold_first_try": True})),
    )
    if slow:
        # the running try's lines reach the log at the runner's next heartbeat: read until they have
        # (a try not started yet answers 404, which is read again too)
        first = record("get_log (running try)", lambda: first_log_lines(tis, "api_slow", slow.dag_run_id, "nap"))
        facts["running_log_token"] = first.continuation_token if first else None
        facts["running_log_events"] = events(first) if first else None
        marked = record("patch_dag_run (mark failed)", lambda: runs.patch_dag_run("api_slow", slow.dag_run_id, DAGRunPatchBody(state="failed")))
        facts["marked_state"] = marked.state.value if marked else None
        if first and first.continuation_token:
            rest = record(
                "get_log (continuation token)",
                lambda: tis.get_log("api_slow", slow.dag_run_id, "nap", 1, token=first.continuation_token),
            )
            facts["continued_token"] = rest.continuation_token if rest else "missing"
            facts["continued_events"] = events(rest) if rest else None
        cleared = record(
            "post_clear_task_instances",
            lambda: tis.post_clear_task_instances(
                "api_slow",
                ClearTaskInstancesBody.from_dict({"dag_run_id": slow.dag_run_id, "dry_run": False, "task_ids": ["nap"], "only_failed": True}),
            ),
        )
        facts["cleared"] = [t.task_id for t in cleared.task_instances] if cleared else None
        again = record("get_dag_run (poll after clear)", lambda: poll(runs, "api_slow", slow.dag_run_id))
        facts["cleared_run_state"] = again.state.value if again else None
        nap = record("get_task_instance (after clear)", lambda: tis.get_task_instance("api_slow", slow.dag_run_id, "nap"))
        facts["cleared_try"] = nap.try_number if nap else None

    fail = record("trigger_dag_run (fail)", lambda: runs.trigger_dag_run("api_fail", TriggerDAGRunPostBody(logical_date=None)))
    if fail:
        failed = record("get_dag_run (poll fail)", lambda: poll(runs, "api_fail", fail.dag_run_id))
        facts["fail_run_state"] = failed.state.value if failed else None
        mark = record(
            "patch_task_instance (mark success)",
            lambda: tis.patch_task_instance("api_fail", fail.dag_run_id, "boom", PatchTaskInstanceBody(new_state="success", note="looked at it")),
        )
        facts["marked_task"] = {"state": mark.task_instances[0].state.value, "note": mark.task_instances[0].note} if mark else None

    record("post_variable", lambda: variables.post_variable(VariableBody(key="client_var", value="one", description="from the client")))
    got = record("get_variable", lambda: variables.get_variable("client_var"))
    facts["variable"] = got.value if got else None
    record("patch_variable", lambda: variables.patch_variable("client_var", VariableBody(key="client_var", value="two")))
    listed_vars = record("get_variables", lambda: variables.get_variables())
    facts["variables"] = sorted(v.key for v in listed_vars.variables) if listed_vars else None
    bulk = record(
        "bulk_variables",
        lambda: variables.bulk_variables(
            BulkBodyVariableBody.from_dict(
                {
                    "actions": [
                        {"action": "create", "entities": [{"key": "bulk_a", "value": "1"}, {"key": "bulk_b", "value": {"n": 2}}]},
                        {"action": "update", "entities": [{"key": "client_var", "value": "three"}]},
                        {"action": "delete", "entities": ["bulk_a"]},
                    ]
                }
            )
        ),
    )
    facts["bulk"] = bulk.to_dict() if bulk else None
    record("delete_variable", lambda: variables.delete_variable("client_var"))

    health = record("get_health", lambda: MonitorApi(client).get_health())
    facts["health"] = health.metadatabase.status if health else None
    version = record("get_version", lambda: VersionApi(client).get_version())
    facts["version"] = version.version if version else None
    errors = record("get_import_errors", lambda: ImportErrorApi(client).get_import_errors())
    facts["import_errors"] = errors.total_entries if errors else None
    source = record("get_dag_source", lambda: DagSourceApi(client).get_dag_source("api_ok"))
    facts["source_has_dag"] = ("api_ok" in (source.content or "")) if source else None

    json.dump({"calls": calls, "facts": facts}, sys.stdout)


if __name__ == "__main__":
    main()
