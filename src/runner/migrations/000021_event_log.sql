-- Airflow's event log (the audit trail): who did what, when, to which DAG, run or task. The API
-- records every change made through it (a trigger, a mark, a clear, a pause, a variable set or
-- deleted, a reparse) and every login, the web view its page actions. Rows are only added.
create table runner.event_log (
  id           bigserial primary key,
  dttm         timestamptz not null default clock_timestamp(),
  event        text not null,
  owner        text,
  dag_id       text,
  task_id      text,
  run_id       text,
  try_number   integer,
  logical_date timestamptz,
  extra        text
);
create index event_log_by_dttm on runner.event_log (dttm);
create index event_log_by_dag on runner.event_log (dag_id, dttm);
