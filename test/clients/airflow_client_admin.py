"""The administrative calls of the breadth flow (airflow_client_breadth.py): variables, pools,
jobs, configuration, connections, backfills, and last the event log of everything the flow did."""

from __future__ import annotations

from airflow_client.client.api.backfill_api import BackfillApi
from airflow_client.client.api.config_api import ConfigApi
from airflow_client.client.api.connection_api import ConnectionApi
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.event_log_api import EventLogApi
from airflow_client.client.api.job_api import JobApi
from airflow_client.client.api.pool_api import PoolApi
from airflow_client.client.api.variable_api import VariableApi
from airflow_client.client.models.backfill_post_body import BackfillPostBody
from airflow_client.client.models.bulk_body_connection_body import BulkBodyConnectionBody
from airflow_client.client.models.bulk_body_pool_body import BulkBodyPoolBody
from airflow_client.client.models.bulk_body_variable_body import BulkBodyVariableBody
from airflow_client.client.models.connection_body import ConnectionBody
from airflow_client.client.models.dag_patch_body import DAGPatchBody
from airflow_client.client.models.connection_test_request_body import ConnectionTestRequestBody
from airflow_client.client.models.pool_body import PoolBody
from airflow_client.client.models.pool_patch_body import PoolPatchBody
from airflow_client.client.models.variable_body import VariableBody


def admin_flow(r, c) -> None:
    variable_flow(r, c)
    pool_flow(r, c)
    jobs = r.call("get_jobs", lambda: JobApi(c).get_jobs(is_alive=True))
    r.fact("jobs", lambda: [(j.job_type, j.state, j.end_date) for j in jobs.jobs])
    config_flow(r, c)
    connection_flow(r, c)
    backfill_flow(r, c)
    event_log_flow(r, c)


def variable_flow(r, c) -> None:
    variables = VariableApi(c)
    r.call("post_variable", lambda: variables.post_variable(VariableBody(key="breadth_var", value={"n": 1}, description="from the client")))
    got = r.call("get_variable", lambda: variables.get_variable("breadth_var"))
    r.fact("variable", lambda: [got.value, got.description])
    r.call("patch_variable", lambda: variables.patch_variable("breadth_var", VariableBody(key="breadth_var", value="two"), update_mask=["value"]))
    r.fact("patched_variable", lambda: [variables.get_variable("breadth_var").value, variables.get_variable("breadth_var").description])
    bulk = BulkBodyVariableBody.from_dict(
        {
            "actions": [
                {"action": "create", "entities": [{"key": "breadth_a", "value": "a"}, {"key": "breadth_var", "value": "x"}], "action_on_existence": "skip"},
                {"action": "delete", "entities": ["breadth_a", "nothing_here"], "action_on_non_existence": "skip"},
            ]
        }
    )
    done = r.call("bulk_variables", lambda: variables.bulk_variables(bulk))
    r.fact("bulk_variables", lambda: done.to_dict())
    listed = r.call("get_variables", lambda: variables.get_variables(variable_key_pattern="breadth"))
    r.fact("variables", lambda: [v.key for v in listed.variables])
    r.call("delete_variable", lambda: variables.delete_variable("breadth_var"))
    r.call("get_variable after delete", lambda: variables.get_variable("breadth_var"), expect=404)


def pool_flow(r, c) -> None:
    """Pools are the runner's: reads answer them, every change is the designed 409."""
    pools = PoolApi(c)
    listed = r.call("get_pools", lambda: pools.get_pools())
    r.fact("pools", lambda: [(p.name, p.slots) for p in listed.pools])
    one = r.call("get_pool", lambda: pools.get_pool("default_pool"))
    r.fact("pool", lambda: [one.name, one.slots, one.open_slots])
    r.call("post_pool", lambda: pools.post_pool(PoolBody(name="client_pool", slots=2)), expect=409)
    r.call("patch_pool", lambda: pools.patch_pool("default_pool", PoolPatchBody(pool="default_pool", slots=9)), expect=409)
    r.call("delete_pool", lambda: pools.delete_pool("default_pool"), expect=409)
    bulk = BulkBodyPoolBody.from_dict({"actions": [{"action": "create", "entities": [{"name": "client_pool", "slots": 2}]}]})
    r.call("bulk_pools", lambda: pools.bulk_pools(bulk), expect=409)
    r.fact("pools_after", lambda: [(p.name, p.slots) for p in pools.get_pools().pools])


def config_flow(r, c) -> None:
    config = ConfigApi(c)
    section = r.call("get_config", lambda: config.get_config(section="postgres"))
    r.fact("config", lambda: {s.name: {o.key: o.value.actual_instance for o in s.options} for s in section.sections})
    value = r.call("get_config_value", lambda: config.get_config_value("postgres", "port"))
    r.fact("config_value", lambda: [(s.name, [(o.key, o.value.actual_instance) for o in s.options]) for s in value.sections])


def connection_flow(r, c) -> None:
    conns = ConnectionApi(c)
    body = ConnectionBody(connection_id="client_conn", conn_type="http", host="h.example", port=8080, password="s3cret", description="from the client")
    made = r.call("post_connection", lambda: conns.post_connection(body))
    r.fact("connection_made", lambda: [made.connection_id, made.password, made.host])
    got = r.call("get_connection", lambda: conns.get_connection("client_conn"))
    r.fact("connection", lambda: [got.conn_type, got.host, got.port, got.password])
    patch = ConnectionBody(connection_id="client_conn", conn_type="http", host="h2.example")
    r.call("patch_connection", lambda: conns.patch_connection("client_conn", patch, update_mask=["host"]))
    r.fact("connection_patched", lambda: [conns.get_connection("client_conn").host, conns.get_connection("client_conn").port])
    bulk = BulkBodyConnectionBody.from_dict(
        {
            "actions": [
                {"action": "create", "entities": [{"connection_id": "client_b", "conn_type": "ftp", "host": "b.example"}]},
                {"action": "update", "entities": [{"connection_id": "client_conn", "conn_type": "http", "description": "bulk"}], "update_mask": ["description"]},
                {"action": "delete", "entities": ["client_b"]},
            ]
        }
    )
    done = r.call("bulk_connections", lambda: conns.bulk_connections(bulk))
    r.fact("bulk_connections", lambda: done.to_dict())
    listed = r.call("get_connections", lambda: conns.get_connections(connection_id_pattern="client_", order_by=["-connection_id"]))
    r.fact("connections", lambda: [(x.connection_id, x.description) for x in listed.connections])
    # tested for real: the runner's own database (runner.api.test_connection: enabled)
    tested = r.call("test_connection", lambda: conns.test_connection(ConnectionBody(connection_id="stand_runner_db", conn_type="postgres")))
    r.fact("connection_test", lambda: [tested.status, tested.message])
    queued = r.call("enqueue_connection_test", lambda: conns.enqueue_connection_test(ConnectionTestRequestBody(connection_id="stand_runner_db", conn_type="postgres")))
    r.fact("connection_test_queued", lambda: [queued.connection_id, queued.state])
    outcome = r.call("get_connection_test", lambda: conns.get_connection_test(queued.token))
    r.fact("connection_test_outcome", lambda: [outcome.connection_id, outcome.state])
    r.call("create_default_connections", lambda: conns.create_default_connections())
    r.call("delete_connection", lambda: conns.delete_connection("client_conn"))
    r.call("get_connection after delete", lambda: conns.get_connection("client_conn"), expect=404)


def backfill_flow(r, c) -> None:
    backfills = BackfillApi(c)
    # the DAG paused, its backfill's runs wait queued: pause, unpause and cancel meet it unfinished
    r.call("patch_dag pause api_daily", lambda: DAGApi(c).patch_dag("api_daily", DAGPatchBody(is_paused=True)))
    body = BackfillPostBody(dag_id="api_daily", from_date="2026-01-01T00:00:00Z", to_date="2026-01-03T00:00:00Z", max_active_runs=1)
    dry = r.call("create_backfill_dry_run", lambda: backfills.create_backfill_dry_run(body))
    r.fact("backfill_dry", lambda: [b.logical_date.isoformat() for b in dry.backfills])
    made = r.call("create_backfill", lambda: backfills.create_backfill(body))
    bid = made.id if made else 0
    listed = r.call("list_backfills", lambda: backfills.list_backfills(dag_id="api_daily"))
    r.fact("backfills", lambda: [b.id for b in listed.backfills] + [bid])
    one = r.call("get_backfill", lambda: backfills.get_backfill(bid))
    r.fact("backfill", lambda: [one.dag_id, one.max_active_runs, one.is_paused])
    paused = r.call("pause_backfill", lambda: backfills.pause_backfill(bid))
    unpaused = r.call("unpause_backfill", lambda: backfills.unpause_backfill(bid))
    cancelled = r.call("cancel_backfill", lambda: backfills.cancel_backfill(bid))
    r.fact("backfill_steps", lambda: [paused.is_paused, unpaused.is_paused, cancelled.completed_at is not None])
    r.fact("backfill_runs", lambda: [(x.dag_run_id, x.state.value) for x in DagRunApi(c).get_dag_runs("api_daily", run_type=["backfill"], order_by=["logical_date"]).dag_runs])
    r.call("patch_dag unpause api_daily", lambda: DAGApi(c).patch_dag("api_daily", DAGPatchBody(is_paused=False)))


def event_log_flow(r, c) -> None:
    """The event log of what this flow changed: every change it made, under its user."""
    logs = EventLogApi(c)
    page = r.call("get_event_logs", lambda: logs.get_event_logs(owner="tester", order_by=["id"], limit=1000))
    r.fact("event_log", lambda: [{"event": e.event, "dag_id": e.dag_id, "run_id": e.run_id, "task_id": e.task_id} for e in page.event_logs])
    first = page.event_logs[0] if page and page.event_logs else None
    one = r.call("get_event_log", lambda: logs.get_event_log(first.event_log_id))
    # the first by id need not be the login: an event is written once its answer is sent, so two close calls may be logged either way
    r.fact("event_log_one", lambda: [one.event == first.event and one.event in {e.event for e in page.event_logs}, one.owner, one.event_log_id == first.event_log_id])
