-- Airflow's DagRun.updated_at: when anything about a run last changed (its state, its dates, its
-- note, its version). The run lists filter and sort by it (updated_at_gte …, order_by=updated_at).
-- Existing runs take the latest of the times they carry.
alter table runner.dag_runs add column updated_at timestamptz;
update runner.dag_runs set updated_at = greatest(queued_at, start_date, end_date);
alter table runner.dag_runs alter column updated_at set default clock_timestamp(), alter column updated_at set not null;

create function runner.touch_dag_run() returns trigger language plpgsql as $$
begin
  new.updated_at := clock_timestamp();
  return new;
end $$;
create trigger dag_runs_touch before update on runner.dag_runs
  for each row when (old.* is distinct from new.*) execute function runner.touch_dag_run();
