-- Marking one task instance success, failed or skipped (Airflow's PATCH of a task instance's
-- new_state), and a note per task instance. A try in flight is stopped as when its run is marked
-- (000009): its task_tries row says so and its late result is refused. In an open run the mark has
-- the same consequences as a try ending that way: success or skipped releases the downstream tasks
-- (a skipped upstream skips them, Airflow's all_success rule), failed ends the run as failed. In a
-- finished run only the task instance changes.
--
-- Locks: the run's lock, then the scheduler lock (7301, 0), the order used everywhere else.

alter table runner.task_instances add column note text;

create function runner.set_task_instance_state(p_ti_id bigint, p_state text, p_by text)
returns boolean language plpgsql as $$
declare
  v_ti runner.task_instances;
  v_run_state text;
  v_note text := format('marked %s by %s', p_state, p_by);
begin
  if p_state not in ('success', 'failed', 'skipped') then
    raise exception 'a task instance can be marked success, failed or skipped, not %', p_state using errcode = '22023';
  end if;
  select * into v_ti from runner.task_instances where id = p_ti_id;
  perform pg_advisory_xact_lock(v_ti.run_pk);
  perform pg_advisory_xact_lock(7301, 0);
  select * into v_ti from runner.task_instances where id = p_ti_id; -- as it is under the lock
  if v_ti.state = p_state then
    return false;
  end if;
  select state into v_run_state from runner.dag_runs where id = v_ti.run_pk;

  if v_ti.state = 'running' and v_ti.attempt_token is not null then
    insert into runner.task_tries (ti_id, try_number, state, worker, attempt_token, start_date, end_date, error)
    values (v_ti.id, v_ti.try_number, 'failed', v_ti.worker, v_ti.attempt_token, v_ti.start_date, clock_timestamp(),
            format('stopped: %s; this try''s own result will be refused', v_note))
    on conflict (ti_id, try_number) do nothing;
  elsif v_ti.state = 'deferred' then
    update runner.task_tries set state = 'failed', end_date = clock_timestamp(), error = format('stopped: %s', v_note)
     where ti_id = v_ti.id and try_number = v_ti.try_number;
  end if;
  if v_ti.try_number > 0 then
    insert into runner.task_log_lines (ti_id, try_number, at, level, message)
    values (v_ti.id, v_ti.try_number, clock_timestamp(), 'warn', format('task instance %s (was %s)', v_note, v_ti.state));
  end if;

  update runner.task_instances
     set state = p_state, end_date = clock_timestamp(), lease_expires_at = null, next_retry_at = null,
         error = case when p_state = 'failed' then v_note end
   where id = v_ti.id;

  if v_run_state in ('success', 'failed') then
    return true;
  end if;
  if p_state = 'failed' then
    perform runner.fail_run(v_ti.run_pk, v_ti.id);
  elsif v_ti.state in ('scheduled', 'queued', 'running', 'deferred', 'up_for_retry') then
    perform runner.release_downstream(v_ti.run_pk, array[v_ti.id]); -- first time it counts as done
  else
    perform runner.settle_run(v_ti.run_pk);
  end if;
  return true;
end $$;
