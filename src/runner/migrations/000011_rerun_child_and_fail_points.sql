-- Two things that make reruns converge, and prove it.
--
-- 1. A waiting trigger that runs again (a retry, or a clear by an operator) goes back to the child
--    run its earlier try started, when that run failed: the child's failed tasks (and those that
--    never started) are cleared and run again in the SAME child run, under the same run id, so a
--    child whose tasks key their work by run id (orders_ingest's load id) continues where it
--    stopped. This is Airflow's TriggerDagRunOperator with reset_dag_run, narrowed to the failed
--    part. A child that succeeded, or that has nothing left to clear, gives way to a new child run.
--
-- 2. Fail points: a runner started with fail points on (runner.fail_points in the stand config; the
--    test stand only) fails a try of (dag_id, task_id) before its function runs or after it
--    succeeded, once per armed point. Tests arm them to check that every task, run twice, leaves
--    the world as one run does. A runner with fail points off never reads this table.

create function runner.defer_to_previous_child(
  p_ti_id bigint, p_token uuid, p_tries jsonb, p_by text, p_log jsonb)
returns table (fenced boolean, child_run_pk bigint, child_run_id text, cleared integer)
language plpgsql as $$
declare
  v_try integer;
  v_worker text;
  v_start timestamptz;
  v_child runner.dag_runs;
  v_cleared integer := 0;
begin
  select ti.try_number, ti.worker, ti.start_date into v_try, v_worker, v_start from runner.task_instances ti
   where ti.id = p_ti_id and ti.attempt_token = p_token and ti.state = 'running' for update;
  if not found then
    return query select true, null::bigint, null::text, 0;
    return;
  end if;
  select * into v_child from runner.dag_runs r where r.parent_ti_id = p_ti_id order by r.id desc limit 1;
  if not found or v_child.state = 'success' then
    return query select false, null::bigint, null::text, 0;
    return;
  end if;
  if v_child.state = 'failed' then
    select count(*) into v_cleared
      from runner.clear_task_instances(v_child.id, null, true, true, false, p_tries, p_by, false);
    select * into v_child from runner.dag_runs r where r.id = v_child.id;
    if v_child.state = 'failed' then
      -- nothing left to clear (a run marked failed with every task done): a new child run
      return query select false, null::bigint, null::text, 0;
      return;
    end if;
  end if;
  update runner.task_instances ti
     set state = 'deferred', lease_expires_at = null,
         child_dag_id = v_child.dag_id, child_run_id = v_child.run_id, child_run_pk = v_child.id
   where ti.id = p_ti_id;
  insert into runner.task_tries (ti_id, try_number, state, worker, attempt_token, start_date)
  values (p_ti_id, v_try, 'deferred', v_worker, p_token, v_start);
  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  select p_ti_id, v_try, x.at, x.level, x.message
    from jsonb_to_recordset(coalesce(p_log, '[]')) as x(at timestamptz, level text, message text);
  return query select false, v_child.id, v_child.run_id, v_cleared;
end $$;

create table runner.fail_points (
  id         bigserial primary key,
  dag_id     text not null,
  task_id    text not null,
  phase      text not null check (phase in ('before', 'after')),
  remaining  integer not null default 1 check (remaining >= 0),
  note       text,
  created_at timestamptz not null default now()
);
create index fail_points_armed on runner.fail_points (dag_id, task_id, phase) where remaining > 0;

-- Takes one armed fail point of (dag, task, phase); true when the try must fail.
create function runner.take_fail_point(p_dag_id text, p_task_id text, p_phase text)
returns boolean language sql as $$
  with armed as (
    select id from runner.fail_points
     where dag_id = p_dag_id and task_id = p_task_id and phase = p_phase and remaining > 0
     order by id limit 1 for update skip locked
  )
  update runner.fail_points f set remaining = f.remaining - 1 from armed where f.id = armed.id
  returning true
$$;
