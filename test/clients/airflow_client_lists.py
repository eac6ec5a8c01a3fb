"""The list cases of the breadth flow: each filter and order_by of get_dag_runs,
get_list_dag_runs_batch, get_task_instances, get_task_instances_batch and get_dags, called
through the client against the run list. The cases come from the test (their expected answers are
its model's); this reports, per case, the ids the runner answered in order and its total, and
each list's parameters as the client declares them (the method's signature, or the batch body's
fields), so the test fails for a filter no case exercised."""

from __future__ import annotations

import datetime
import enum
import inspect
import re
import typing

import airflow_client.client.models as client_models

from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.task_instance_api import TaskInstanceApi
from airflow_client.client.exceptions import ApiException
from airflow_client.client.models.dag_runs_batch_body import DAGRunsBatchBody
from airflow_client.client.models.task_instances_batch_body import TaskInstancesBatchBody

# path parameters and bodies are not filters
NOT_FILTERS = {"self", "dag_id", "dag_run_id", "dag_runs_batch_body", "task_instances_batch_body"}


def method_parameters(method) -> dict:
    """The filters of a list method: name -> annotation. Where the signature says only Any, the
    docstring's `:type` names the class (get_dags' last_dag_run_state is `Optional[Any]` yet
    serialized with `.value`: a DagRunState)."""
    documented = dict(re.findall(r":type (\w+): (\w+)", method.__doc__ or ""))
    params = inspect.signature(method).parameters
    out = {}
    for name, p in params.items():
        if name.startswith("_") or name in NOT_FILTERS:
            continue
        annotation = p.annotation
        if "typing.Any" in str(annotation) and hasattr(client_models, documented.get(name, "")):
            annotation = getattr(client_models, documented[name])
        out[name] = annotation
    return out


def enum_in(annotation):
    """The enum class an annotation (Optional[DagRunState], Annotated[...]) names, if any."""
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    for arg in typing.get_args(annotation):
        found = enum_in(arg)
        if found is not None:
            return found
    return None


def converted(args: dict, annotations: dict) -> dict:
    """The case's values as the client's types: ISO text as a datetime or a date, and an enum's
    value as the enum, where the client's signature wants one."""
    out = {}
    for name, value in args.items():
        kind = str(annotations.get(name, ""))
        choices = enum_in(annotations.get(name))
        if isinstance(value, str) and "datetime.datetime" in kind:
            value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif isinstance(value, str) and "datetime.date" in kind:
            value = datetime.date.fromisoformat(value)
        elif isinstance(value, str) and choices is not None:
            value = choices(value)
        out[name] = value
    return out


def run_cases(client, cases: list[dict]) -> dict:
    dags, runs, tis = DAGApi(client), DagRunApi(client), TaskInstanceApi(client)
    signatures = {
        "get_dag_runs": method_parameters(runs.get_dag_runs),
        "get_task_instances": method_parameters(tis.get_task_instances),
        "get_dags": method_parameters(dags.get_dags),
        "get_list_dag_runs_batch": {name: "body" for name in DAGRunsBatchBody.model_fields},
        "get_task_instances_batch": {name: "body" for name in TaskInstancesBatchBody.model_fields},
    }
    callers = {
        "get_dag_runs": lambda path, args: runs.get_dag_runs(path["dag_id"], **converted(args, signatures["get_dag_runs"])),
        "get_list_dag_runs_batch": lambda path, args: runs.get_list_dag_runs_batch(path["dag_id"], DAGRunsBatchBody.from_dict(args)),
        "get_task_instances": lambda path, args: tis.get_task_instances(path["dag_id"], path["dag_run_id"], **converted(args, signatures["get_task_instances"])),
        "get_task_instances_batch": lambda path, args: tis.get_task_instances_batch(path["dag_id"], path["dag_run_id"], TaskInstancesBatchBody.from_dict(args)),
        "get_dags": lambda path, args: dags.get_dags(**converted(args, signatures["get_dags"])),
    }
    answered = []
    for case in cases:
        outcome = {"name": case["name"]}
        try:
            page = callers[case["op"]](case.get("path", {}), case["args"])
            outcome.update(ids=ids_of(case["op"], page), total=page.total_entries)
        except ApiException as err:
            outcome.update(status=err.status, error=str(err.body)[:300])
        except Exception as err:  # noqa: BLE001 - a refused value or model is a finding
            outcome.update(status=None, error=f"{type(err).__name__}: {str(err)[:300]}")
        answered.append(outcome)
    return {"signatures": {op: sorted(params) for op, params in signatures.items()}, "cases": answered}


def ids_of(op: str, page) -> list[str]:
    if op == "get_dags":
        return [d.dag_id for d in page.dags]
    if op in ("get_dag_runs", "get_list_dag_runs_batch"):
        return [f"{r.dag_id}/{r.dag_run_id}" for r in page.dag_runs]
    return [f"{t.dag_id}/{t.dag_run_id}/{t.task_id}" for t in page.task_instances]
