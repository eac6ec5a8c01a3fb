"""Every call the runner serves, through the official Python client's API classes
(apache-airflow-client, airflow_client.client.api.*), each with what it did read back: DAGs,
runs, task instances, XCom and task groups here; variables, pools, jobs, configuration,
connections, backfills and the event log in airflow_client_admin.py; and each list filter and
order_by case against the run list in airflow_client_lists.py.

Run by test/clients/airflow-client-breadth.test.ts with the venv's python, one process for all:
AIRFLOW_BASE_URL is the runner of the flow, AIRFLOW_LIST_URL the runner holding the run list, and
BREADTH_INPUT the list cases (JSON). Prints one JSON document: {"calls": [{"call", "op", "ok",
"status", "dry", "error"}], "facts": {...}, "client_ops": [...], "lists": {...}}. A call is named
by its operationId (the client's method name), with a suffix for a variant; a call answered with
the status the runner is designed to give (a 409 of a read-only pool) passes with that status.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import airflow_client.client as af
import airflow_client.client.api as client_apis
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_parsing_api import DAGParsingApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.dag_source_api import DagSourceApi
from airflow_client.client.api.dag_stats_api import DagStatsApi
from airflow_client.client.api.dag_version_api import DagVersionApi
from airflow_client.client.api.dag_warning_api import DagWarningApi
from airflow_client.client.api.extra_links_api import ExtraLinksApi
from airflow_client.client.api.import_error_api import ImportErrorApi
from airflow_client.client.api.login_api import LoginApi
from airflow_client.client.api.monitor_api import MonitorApi
from airflow_client.client.api.plugin_api import PluginApi
from airflow_client.client.api.provider_api import ProviderApi
from airflow_client.client.api.task_api import TaskApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.api.version_api import VersionApi
from airflow_client.client.api.x_com_api import XComApi
from airflow_client.client.exceptions import ApiException
from airflow_client.client.models.bulk_body_bulk_dag_run_body import BulkBodyBulkDAGRunBody
from airflow_client.client.models.bulk_body_bulk_task_instance_body import BulkBodyBulkTaskInstanceBody
from airflow_client.client.models.bulk_dag_run_clear_body import BulkDAGRunClearBody
from airflow_client.client.models.clear_task_instances_body import ClearTaskInstancesBody
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.dag_run_clear_body import DAGRunClearBody
from airflow_client.client.models.dag_run_patch_body import DAGRunPatchBody
from airflow_client.client.models.dag_runs_batch_body import DAGRunsBatchBody
from airflow_client.client.models.patch_task_instance_body import PatchTaskInstanceBody
from airflow_client.client.models.task_instances_batch_body import TaskInstancesBatchBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody
from airflow_client.client.models.x_com_create_body import XComCreateBody
from airflow_client.client.models.x_com_update_body import XComUpdateBody

import airflow_client_admin
from airflow_client_flow import poll
import airflow_client_lists


class Recorder:
    """Each call's outcome under its name, and the facts the test asserts."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.facts: dict = {}

    def call(self, name: str, fn, expect: int | None = None, dry: bool = False):
        """Runs fn; ok when it answers (or, with expect, when it answers that HTTP status)."""
        entry = {"call": name, "op": name.split(" ")[0], "dry": dry}
        try:
            result = fn()
        except ApiException as err:
            entry["status"] = err.status
            entry["ok"] = expect is not None and err.status == expect
            if not entry["ok"]:
                entry["error"] = f"{err.status} {err.reason}: {str(err.body)[:600]}"
            self.calls.append(entry)
            return err if entry["ok"] else None
        except Exception as err:  # noqa: BLE001 - a refused model is a finding too
            entry.update(ok=False, error=f"{type(err).__name__}: {str(err)[:600]}")
            self.calls.append(entry)
            return None
        entry["ok"] = expect is None
        if expect is not None:
            entry["error"] = f"expected HTTP {expect}, the call succeeded"
        self.calls.append(entry)
        return result

    def fact(self, key: str, compute):
        """A fact from a call's answer; an answer missing (the call failed) or malformed is recorded as such."""
        try:
            self.facts[key] = compute()
        except Exception as err:  # noqa: BLE001
            self.facts[key] = f"unavailable: {type(err).__name__}: {str(err)[:200]}"


def token_for(base: str) -> str:
    body = json.dumps({"username": os.environ["AIRFLOW_USER"], "password": os.environ["AIRFLOW_PASSWORD"]}).encode()
    request = urllib.request.Request(f"{base}/auth/token", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)["access_token"]


def client_for(base: str, token: str) -> af.ApiClient:
    return af.ApiClient(af.Configuration(host=base, access_token=token))


def client_operations() -> list[str]:
    """Every operationId the client has: the public methods of its API classes."""
    ops = set()
    for name in dir(client_apis):
        cls = getattr(client_apis, name)
        if isinstance(cls, type) and name.endswith("Api"):
            for method in dir(cls):
                if not method.startswith("_") and not method.endswith(("_with_http_info", "_without_preload_content")):
                    ops.add(method)
    return sorted(ops)


def wait_for(runs: DagRunApi, dag_id: str, run_id: str):
    """A run once it has ended (the flow's own polling: get_dag_run is recorded once, below)."""
    return poll(runs, dag_id, run_id, interval=0.1)


def ti_states(tis: TaskInstanceApi, dag_id: str, run_id: str) -> dict:
    return {t.task_id: t.state.value if t.state else None for t in tis.get_task_instances(dag_id, run_id).task_instances}


def unparsed(response) -> dict:
    """The JSON of an answer read without the client's models; an error status raises as the client would."""
    if response.status >= 400:
        raise ApiException(status=response.status, reason=response.reason, body=response.data.decode())
    return json.loads(response.data)


def events(log) -> list[str]:
    items = log.content.actual_instance if hasattr(log.content, "actual_instance") else log.content
    return [item if isinstance(item, str) else item.event for item in items]


def dag_flow(r: Recorder, c: af.ApiClient) -> None:
    dags = DAGApi(c)
    login = r.call("login", lambda: LoginApi(c).login(next="/dags"))
    r.fact("login", lambda: {"token_url": login["token_url"], "next": login["next"]})
    logout = r.call("logout", lambda: LoginApi(c).logout())
    r.fact("logout", lambda: logout["detail"])
    health = r.call("get_health", lambda: MonitorApi(c).get_health())
    r.fact("health", lambda: health.metadatabase.status)
    version = r.call("get_version", lambda: VersionApi(c).get_version())
    r.fact("version", lambda: version.version)

    listed = r.call("get_dags", lambda: dags.get_dags())
    r.fact("dag_ids", lambda: [d.dag_id for d in listed.dags])
    dag = r.call("get_dag", lambda: dags.get_dag("api_ok"))
    details = r.call("get_dag_details", lambda: dags.get_dag_details("api_ok"))
    r.fact("details", lambda: {"timezone": details.timezone, "params": sorted(details.params)})
    paused = r.call("patch_dag", lambda: dags.patch_dag("api_ok", DAGPatchBody(is_paused=True), update_mask=["is_paused"]))
    r.fact("patch_dag", lambda: [paused.is_paused, dags.get_dag("api_ok").is_paused])
    r.call("patch_dag unpause", lambda: dags.patch_dag("api_ok", DAGPatchBody(is_paused=False)))
    several = r.call("patch_dags pause", lambda: dags.patch_dags(DAGPatchBody(is_paused=True), dag_id_pattern="api_slow|api_fail", update_mask=["is_paused"]))
    r.fact("patch_dags_paused", lambda: sorted((d.dag_id, d.is_paused) for d in several.dags))
    r.fact("paused_after_patch_dags", lambda: sorted(d.dag_id for d in dags.get_dags(paused=True).dags))
    r.call("patch_dags unpause", lambda: dags.patch_dags(DAGPatchBody(is_paused=False), dag_id_pattern="~"))
    r.fact("paused_after_unpause", lambda: [d.dag_id for d in dags.get_dags(paused=True).dags])
    tags = r.call("get_dag_tags", lambda: dags.get_dag_tags())
    r.fact("dag_tags", lambda: [tags.tags, tags.total_entries])

    tasks = r.call("get_tasks", lambda: TaskApi(c).get_tasks("api_ok"))
    r.fact("tasks", lambda: {t.task_id: t.downstream_task_ids for t in tasks.tasks})
    task = r.call("get_task", lambda: TaskApi(c).get_task("api_ok", "first"))
    r.fact("task", lambda: [task.task_id, task.downstream_task_ids, task.retries])
    source = r.call("get_dag_source", lambda: DagSourceApi(c).get_dag_source("api_ok"))
    r.fact("source_names_dag", lambda: "api_ok" in (source.content or ""))
    versions = r.call("get_dag_versions", lambda: DagVersionApi(c).get_dag_versions("api_ok"))
    r.fact("dag_versions", lambda: [v.version_number for v in versions.dag_versions])
    one = r.call("get_dag_version", lambda: DagVersionApi(c).get_dag_version("api_ok", 1))
    r.fact("dag_version", lambda: [one.dag_id, one.version_number, one.bundle_name])
    r.call("reparse_dag_file", lambda: DAGParsingApi(c).reparse_dag_file(dag.file_token))

    empty = {
        "list_dag_warnings": lambda: DagWarningApi(c).list_dag_warnings(),
        "get_plugins": lambda: PluginApi(c).get_plugins(),
        "import_errors": lambda: PluginApi(c).import_errors(),
        "get_providers": lambda: ProviderApi(c).get_providers(),
    }
    r.facts["empty_lists"] = {}
    for op, fn in empty.items():
        answer = r.call(op, fn)
        r.facts["empty_lists"][op] = answer.total_entries if answer else None
    errors = r.call("get_import_errors", lambda: ImportErrorApi(c).get_import_errors())
    r.fact("import_errors", lambda: [e.filename for e in errors.import_errors])
    error = r.call("get_import_error", lambda: ImportErrorApi(c).get_import_error(errors.import_errors[0].import_error_id))
    r.fact("import_error", lambda: [error.filename, error.stack_trace])

    # per-user favourites: listed with is_favorite and said so in the details, then gone
    r.call("favorite_dag", lambda: dags.favorite_dag("api_ok"))
    favourites = r.call("get_dags is_favorite=True", lambda: dags.get_dags(is_favorite=True))
    r.fact("favourites", lambda: [d.dag_id for d in favourites.dags])
    r.fact("details_is_favorite", lambda: dags.get_dag_details("api_ok").is_favorite)
    r.call("unfavorite_dag", lambda: dags.unfavorite_dag("api_ok"))
    r.fact("favourites_after", lambda: [d.dag_id for d in dags.get_dags(is_favorite=True).dags])


def run_flow(r: Recorder, c: af.ApiClient) -> None:
    runs, tis = DagRunApi(c), TaskInstanceApi(c)
    body = TriggerDAGRunPostBody(dag_run_id="breadth_1", logical_date=None, conf={"days": 3}, note="from the breadth flow")
    made = r.call("trigger_dag_run", lambda: runs.trigger_dag_run("api_ok", body))
    r.fact("triggered", lambda: [made.dag_run_id, made.state.value, made.note, made.triggering_user_name])
    waited = r.call("wait_dag_run_until_finished", lambda: runs.wait_dag_run_until_finished("api_ok", "breadth_1", interval=0.1, result=["first"]))
    r.facts["waited"] = waited
    run = r.call("get_dag_run", lambda: runs.get_dag_run("api_ok", "breadth_1"))
    r.fact("run", lambda: [run.state.value, run.conf])
    page = r.call("get_dag_runs", lambda: runs.get_dag_runs("api_ok", run_id_pattern="breadth"))
    r.fact("listed_runs", lambda: [x.dag_run_id for x in page.dag_runs])
    batch = r.call("get_list_dag_runs_batch", lambda: runs.get_list_dag_runs_batch("~", DAGRunsBatchBody(dag_ids=["api_ok"], states=["success"])))
    r.fact("batch_runs", lambda: [(x.dag_id, x.dag_run_id) for x in batch.dag_runs])
    r.call("patch_dag_run", lambda: runs.patch_dag_run("api_ok", "breadth_1", DAGRunPatchBody(note="patched"), update_mask=["note"]))
    r.fact("patched_run", lambda: [runs.get_dag_run("api_ok", "breadth_1").note, runs.get_dag_run("api_ok", "breadth_1").state.value])
    stats = r.call("get_dag_stats", lambda: DagStatsApi(c).get_dag_stats(dag_ids=["api_ok"]))
    r.fact("stats", lambda: {s.state.value: s.count for s in stats.dags[0].stats})

    task_instance_reads(r, c)
    task_instance_changes(r, c)
    xcom_flow(r, c)
    clear_flow(r, c)
    bulk_flow(r, c)
    group_flow(r, c)


def task_instance_reads(r: Recorder, c: af.ApiClient) -> None:
    tis = TaskInstanceApi(c)
    key = ("api_ok", "breadth_1", "first")
    listed = r.call("get_task_instances", lambda: tis.get_task_instances("api_ok", "breadth_1"))
    r.fact("task_states", lambda: {t.task_id: t.state.value for t in listed.task_instances})
    batch = r.call(
        "get_task_instances_batch",
        lambda: tis.get_task_instances_batch("~", "~", TaskInstancesBatchBody(dag_ids=["api_ok"], dag_run_ids=["breadth_1"], order_by="-start_date")),
    )
    r.fact("batch_tis", lambda: [t.task_id for t in batch.task_instances])
    one = r.call("get_task_instance", lambda: tis.get_task_instance(*key))
    mapped = r.call("get_mapped_task_instance", lambda: tis.get_mapped_task_instance(*key, -1))
    r.fact("task_instance", lambda: [one.task_id, one.try_number, one.map_index, mapped.task_id, mapped.map_index, mapped.state.value])
    log = r.call("get_log", lambda: tis.get_log(*key, 1))
    r.fact("log_events", lambda: events(log))
    tries = r.call("get_task_instance_tries", lambda: tis.get_task_instance_tries(*key))
    mapped_tries = r.call("get_mapped_task_instance_tries", lambda: tis.get_mapped_task_instance_tries(*key, -1))
    r.fact("tries", lambda: [[t.try_number for t in tries.task_instances], [t.try_number for t in mapped_tries.task_instances]])
    detail = r.call("get_task_instance_try_details", lambda: tis.get_task_instance_try_details(*key, 1))
    mapped_detail = r.call("get_mapped_task_instance_try_details", lambda: tis.get_mapped_task_instance_try_details(*key, 1, -1))
    r.fact("try_details", lambda: [detail.try_number, detail.state.value, mapped_detail.try_number, mapped_detail.map_index])
    deps = r.call("get_task_instance_dependencies", lambda: tis.get_task_instance_dependencies(*key))
    mapped_deps = r.call("get_task_instance_dependencies_by_map_index", lambda: tis.get_task_instance_dependencies_by_map_index(*key, -1))
    r.fact("dependencies", lambda: [[d.name for d in deps.dependencies], [d.name for d in mapped_deps.dependencies]])
    links = r.call("get_extra_links", lambda: ExtraLinksApi(c).get_extra_links(*key))
    r.fact("extra_links", lambda: [links.extra_links, links.total_entries])
    # the runner keeps every log itself (400) and maps no task (404): its designed answers
    r.call("get_external_log_url", lambda: tis.get_external_log_url(*key, 1), expect=400)
    r.call("get_mapped_task_instances", lambda: tis.get_mapped_task_instances(*key), expect=404)


def task_instance_changes(r: Recorder, c: af.ApiClient) -> None:
    tis = TaskInstanceApi(c)
    key = ("api_ok", "breadth_1", "second")
    failed = PatchTaskInstanceBody(new_state="failed")
    dry = r.call("patch_task_instance_dry_run", lambda: tis.patch_task_instance_dry_run(*key, failed), dry=True)
    dry_mapped = r.call("patch_task_instance_dry_run_by_map_index", lambda: tis.patch_task_instance_dry_run_by_map_index(*key, -1, failed), dry=True)
    r.fact("dry_patch", lambda: [[t.task_id for t in dry.task_instances], [t.task_id for t in dry_mapped.task_instances], tis.get_task_instance(*key).state.value])
    r.call(
        "patch_task_instance_by_map_index",
        lambda: tis.patch_task_instance_by_map_index(*key, -1, PatchTaskInstanceBody(note="by map index"), update_mask=["note"]),
    )
    r.fact("noted_by_map_index", lambda: tis.get_task_instance(*key).note)
    marked = r.call("patch_task_instance", lambda: tis.patch_task_instance(*key, failed))
    r.fact("marked", lambda: [[t.task_id for t in marked.task_instances], tis.get_task_instance(*key).state.value, DagRunApi(c).get_dag_run("api_ok", "breadth_1").state.value])


def xcom_flow(r: Recorder, c: af.ApiClient) -> None:
    xcom = XComApi(c)
    entries = r.call("get_xcom_entries", lambda: xcom.get_xcom_entries("api_ok", "breadth_1", "~"))
    r.fact("xcom_entries", lambda: sorted((e.task_id, e.key) for e in entries.xcom_entries))
    returned = r.call("get_xcom_entry", lambda: xcom.get_xcom_entry("api_ok", "first", "breadth_1", "return_value"))
    r.fact("xcom_return_value", lambda: returned.actual_instance.value)
    made = r.call("create_xcom_entry", lambda: xcom.create_xcom_entry("api_ok", "second", "breadth_1", XComCreateBody(key="client_key", value={"n": 1})))
    r.fact("xcom_created", lambda: [made.key, made.value, xcom.get_xcom_entry("api_ok", "second", "breadth_1", "client_key").actual_instance.value])
    r.call("update_xcom_entry", lambda: xcom.update_xcom_entry("api_ok", "second", "breadth_1", "client_key", XComUpdateBody(value=[1, 2])))
    r.fact("xcom_updated", lambda: xcom.get_xcom_entry("api_ok", "second", "breadth_1", "client_key").actual_instance.value)
    found = r.call("get_xcom_entries across", lambda: xcom.get_xcom_entries("~", "~", "~", xcom_key_pattern="client", order_by=["-key"]))
    r.fact("xcom_found", lambda: [(e.dag_id, e.run_id, e.task_id, e.key) for e in found.xcom_entries])
    r.call("delete_xcom_entry", lambda: xcom.delete_xcom_entry("api_ok", "second", "breadth_1", "client_key"))
    r.call("get_xcom_entry after delete", lambda: xcom.get_xcom_entry("api_ok", "second", "breadth_1", "client_key"), expect=404)


def clear_flow(r: Recorder, c: af.ApiClient) -> None:
    runs, tis = DagRunApi(c), TaskInstanceApi(c)
    # a dry clear answers full task instances, which match both of the oneOf Airflow's document gives
    # its items: the client (3.3.2) raises "Multiple matches" on it from Airflow as from here, so it
    # is read unparsed (docs/api.md, XCom)
    dry = r.call(
        "clear_dag_run dry_run",
        lambda: unparsed(runs.clear_dag_run_without_preload_content("api_ok", "breadth_1", DAGRunClearBody(dry_run=True, only_failed=True))),
        dry=True,
    )
    r.fact("clear_dry", lambda: [t["task_id"] for t in dry["task_instances"]])
    cleared = r.call("clear_dag_run", lambda: runs.clear_dag_run("api_ok", "breadth_1", DAGRunClearBody(dry_run=False, only_failed=True)))
    r.fact("cleared_run", lambda: [cleared.actual_instance.dag_run_id, cleared.actual_instance.state.value])
    r.fact("after_clear", lambda: [wait_for(runs, "api_ok", "breadth_1").state.value, {t: tis.get_task_instance("api_ok", "breadth_1", t).try_number for t in ("first", "second")}])
    several = BulkDAGRunClearBody(dag_runs=[{"dag_run_id": "breadth_1", "dag_id": "api_ok"}], dry_run=True, only_failed=False)
    dry_many = r.call("clear_dag_runs dry_run", lambda: unparsed(runs.clear_dag_runs_without_preload_content("~", several)), dry=True)
    r.fact("clear_runs_dry", lambda: sorted(t["task_id"] for t in dry_many["task_instances"]))
    several = BulkDAGRunClearBody(dag_runs=[{"dag_run_id": "breadth_1"}], dry_run=False, only_failed=False, note="cleared twice")
    many = r.call("clear_dag_runs", lambda: runs.clear_dag_runs("api_ok", several))
    r.fact("cleared_runs", lambda: [x.dag_run_id for x in many.actual_instance.dag_runs])
    r.fact("after_clear_runs", lambda: [wait_for(runs, "api_ok", "breadth_1").state.value, runs.get_dag_run("api_ok", "breadth_1").note, {t: tis.get_task_instance("api_ok", "breadth_1", t).try_number for t in ("first", "second")}])
    body = ClearTaskInstancesBody.from_dict({"dag_run_id": "breadth_1", "dry_run": True, "only_failed": False, "task_ids": ["second"]})
    dry_tis = r.call("post_clear_task_instances dry_run", lambda: tis.post_clear_task_instances("api_ok", body), dry=True)
    r.fact("clear_tis_dry", lambda: [t.task_id for t in dry_tis.task_instances])
    body = ClearTaskInstancesBody.from_dict({"dag_run_id": "breadth_1", "dry_run": False, "only_failed": False, "task_ids": ["second"]})
    cleared_tis = r.call("post_clear_task_instances", lambda: tis.post_clear_task_instances("api_ok", body))
    r.fact("cleared_tis", lambda: [t.task_id for t in cleared_tis.task_instances])
    r.fact("after_clear_tis", lambda: [wait_for(runs, "api_ok", "breadth_1").state.value, tis.get_task_instance("api_ok", "breadth_1", "second").try_number])
    r.call("delete_task_instance", lambda: tis.delete_task_instance("api_ok", "breadth_1", "second"))
    r.call("get_task_instance after delete", lambda: tis.get_task_instance("api_ok", "breadth_1", "second"), expect=404)
    r.fact("after_ti_delete", lambda: sorted(ti_states(tis, "api_ok", "breadth_1")))


def bulk_flow(r: Recorder, c: af.ApiClient) -> None:
    runs, tis = DagRunApi(c), TaskInstanceApi(c)
    create = BulkBodyBulkDAGRunBody.from_dict({"actions": [{"action": "create", "entities": [{"dag_run_id": "bulk_a"}, {"dag_run_id": "bulk_b", "note": "made in bulk"}]}]})
    created = r.call("bulk_dag_runs create", lambda: runs.bulk_dag_runs("api_ok", create))
    r.fact("bulk_runs_created", lambda: created.to_dict())
    r.fact("bulk_runs_ended", lambda: [wait_for(runs, "api_ok", rid).state.value for rid in ("bulk_a", "bulk_b")])
    change = BulkBodyBulkDAGRunBody.from_dict(
        {
            "actions": [
                {"action": "update", "entities": [{"dag_run_id": "bulk_a", "note": "noted in bulk"}], "update_mask": ["note"]},
                {"action": "delete", "entities": ["bulk_b"]},
            ]
        }
    )
    changed = r.call("bulk_dag_runs update delete", lambda: runs.bulk_dag_runs("api_ok", change))
    r.fact("bulk_runs_changed", lambda: changed.to_dict())
    r.fact("bulk_a_note", lambda: runs.get_dag_run("api_ok", "bulk_a").note)
    r.call("get_dag_run after bulk delete", lambda: runs.get_dag_run("api_ok", "bulk_b"), expect=404)
    ti_body = BulkBodyBulkTaskInstanceBody.from_dict(
        {
            "actions": [
                {"action": "update", "entities": [{"task_id": "first", "note": "ti noted in bulk"}], "update_mask": ["note"]},
                {"action": "delete", "entities": ["second"]},
                {"action": "create", "entities": [{"task_id": "third"}]},
            ]
        }
    )
    bulk_tis = r.call("bulk_task_instances", lambda: tis.bulk_task_instances("api_ok", "bulk_a", ti_body))
    r.fact("bulk_tis", lambda: bulk_tis.to_dict())
    r.fact("bulk_tis_after", lambda: [tis.get_task_instance("api_ok", "bulk_a", "first").note, sorted(ti_states(tis, "api_ok", "bulk_a"))])
    r.call("delete_dag_run", lambda: runs.delete_dag_run("api_ok", "bulk_a"))
    r.call("get_dag_run after delete", lambda: runs.get_dag_run("api_ok", "bulk_a"), expect=404)


def group_flow(r: Recorder, c: af.ApiClient) -> None:
    """Task groups: the run's task instances whose id starts with '<group_id>.' (grp, not grpx)."""
    runs, tis = DagRunApi(c), TaskInstanceApi(c)
    r.call("trigger_dag_run api_groups", lambda: runs.trigger_dag_run("api_groups", TriggerDAGRunPostBody(dag_run_id="groups_1", logical_date=None)))
    r.fact("groups_run", lambda: wait_for(runs, "api_groups", "groups_1").state.value)
    failed = PatchTaskInstanceBody(new_state="failed")
    dry = r.call("patch_task_group_instances_dry_run", lambda: tis.patch_task_group_instances_dry_run("api_groups", "groups_1", "grp", failed), dry=True)
    r.fact("group_dry", lambda: sorted(t.task_id for t in dry.task_instances))
    inner = r.call("patch_task_group_instances_dry_run grp.inner", lambda: tis.patch_task_group_instances_dry_run("api_groups", "groups_1", "grp.inner", failed), dry=True)
    r.fact("group_inner_dry", lambda: sorted(t.task_id for t in inner.task_instances))
    r.fact("group_states_after_dry", lambda: ti_states(tis, "api_groups", "groups_1"))
    marked = r.call("patch_task_group_instances", lambda: tis.patch_task_group_instances("api_groups", "groups_1", "grp", failed))
    r.fact("group_marked", lambda: sorted(t.task_id for t in marked.task_instances))
    r.fact("group_states", lambda: ti_states(tis, "api_groups", "groups_1"))


def fail_and_delete_dag(r: Recorder, c: af.ApiClient) -> None:
    runs, dags = DagRunApi(c), DAGApi(c)
    r.call("trigger_dag_run api_fail", lambda: runs.trigger_dag_run("api_fail", TriggerDAGRunPostBody(dag_run_id="fail_1", logical_date=None)))
    r.fact("fail_run", lambda: wait_for(runs, "api_fail", "fail_1").state.value)
    r.call("delete_dag", lambda: dags.delete_dag("api_fail"))
    r.fact("after_delete_dag", lambda: [runs.get_dag_runs("api_fail").total_entries, dags.get_dag("api_fail").dag_id])


def main() -> None:
    base, list_base = os.environ["AIRFLOW_BASE_URL"], os.environ["AIRFLOW_LIST_URL"]
    given = json.loads(os.environ["BREADTH_INPUT"])
    r = Recorder()
    # the run list first, while its runner holds only what the test wrote
    lists = airflow_client_lists.run_cases(client_for(list_base, token_for(list_base)), given["cases"])
    token = r.call("create_token", lambda: token_for(base))
    c = client_for(base, token)
    dag_flow(r, c)
    run_flow(r, c)
    fail_and_delete_dag(r, c)
    airflow_client_admin.admin_flow(r, c)
    json.dump({"calls": r.calls, "facts": r.facts, "client_ops": client_operations(), "lists": lists}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
