-- XCom: small values a task hands to the tasks after it and to whoever reads the run (Airflow's
-- xcom table). A row belongs to one try of one task instance: a task's context pushes it (fenced by
-- the try's token, as variables are), the API creates or edits one. Reads show the rows of a task
-- instance's current try only, so a cleared task or a retry starts with none, as Airflow clears a
-- task's XCom when it runs again, without a delete on every try's start.
create table runner.xcom (
  ti_id       bigint not null references runner.task_instances (id) on delete cascade,
  try_number  integer not null,
  key         text not null,
  value       jsonb not null,
  updated_at  timestamptz not null default clock_timestamp(),
  primary key (ti_id, try_number, key)
);
