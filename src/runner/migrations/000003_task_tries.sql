-- Ending a try: every write is fenced by the try's attempt token, so a worker that lost its
-- lease (crashed, stalled, partitioned) cannot overwrite what its successor did. The claim that
-- starts a try is a plain statement in src/runner/task-tries.ts; a running try lives on its task
-- instance row, and gets its task_tries row when it ends (or defers).
--
-- Decisions about one run's tasks are serialised by a transaction-level advisory lock on the
-- run's id (cheaper than a row lock: no write to the run row on every completion).

-- p_outcome: 'success' | 'failed' | 'lost' (the lease lapsed). p_lease_expired_only makes the
-- reaper's takeover atomic with the lease check, so a heartbeat that just renewed wins.
create function runner.finish_task_try(
  p_ti_id bigint, p_token uuid, p_outcome text, p_error text, p_retryable boolean,
  p_retry_delay_ms integer, p_skip text[], p_log jsonb, p_lease_expired_only boolean default false)
returns table (accepted boolean, task_state text, retry_in_ms double precision)
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_run_pk bigint;
  v_run_open boolean;
  v_try integer;
  v_state text;
  v_worker text;
  v_start timestamptz;
begin
  select run_pk into v_run_pk from runner.task_instances where id = p_ti_id;
  perform pg_advisory_xact_lock(v_run_pk);
  -- The run's lock is held until commit, so the WAL flush would serialise every completion of a
  -- run; without waiting for it, a Postgres crash can lose the last fraction of a second of
  -- results. Their tries are then running with a lapsed lease and the reaper retries them
  -- (at-least-once), with nothing half-applied: successors and result commit together.
  perform set_config('synchronous_commit', 'off', true);
  select state not in ('success', 'failed') into v_run_open from runner.dag_runs where id = v_run_pk;

  update runner.task_instances ti
     set state = case
                   when p_outcome = 'success' then 'success'
                   when p_retryable and v_run_open and ti.try_number < ti.max_tries then 'up_for_retry'
                   else 'failed'
                 end,
         end_date = clock_timestamp(),
         error = p_error,
         lease_expires_at = null,
         next_retry_at = case when p_outcome <> 'success' and p_retryable and v_run_open and ti.try_number < ti.max_tries
                              then clock_timestamp() + make_interval(secs => p_retry_delay_ms / 1000.0) end,
         queued_at = case when p_outcome <> 'success' and p_retryable and v_run_open and ti.try_number < ti.max_tries
                          then clock_timestamp() + make_interval(secs => p_retry_delay_ms / 1000.0) else ti.queued_at end
   where ti.id = p_ti_id and ti.attempt_token = p_token and ti.state = 'running'
     and (not p_lease_expired_only or ti.lease_expires_at < clock_timestamp())
  returning ti.try_number, ti.state, ti.worker, ti.start_date into v_try, v_state, v_worker, v_start;

  if not found then
    -- a late result: keep what it said in its own try's log, change nothing else
    insert into runner.task_log_lines (ti_id, try_number, at, level, message)
    select p_ti_id, tt.try_number, x.at, x.level, x.message
      from runner.task_tries tt, jsonb_to_recordset(coalesce(p_log, '[]')) as x(at timestamptz, level text, message text)
     where tt.ti_id = p_ti_id and tt.attempt_token = p_token and not p_lease_expired_only;
    insert into runner.task_log_lines (ti_id, try_number, at, level, message)
    select p_ti_id, tt.try_number, clock_timestamp(), 'warn',
           format('late %s result refused: try %s no longer holds the task', p_outcome, tt.try_number)
      from runner.task_tries tt
     where tt.ti_id = p_ti_id and tt.attempt_token = p_token and not p_lease_expired_only;
    return query select false, ti.state, null::double precision from runner.task_instances ti where ti.id = p_ti_id;
    return;
  end if;

  insert into runner.task_tries (ti_id, try_number, state, worker, attempt_token, start_date, end_date, error)
  values (p_ti_id, v_try, case p_outcome when 'success' then 'success' when 'lost' then 'lost' else 'failed' end,
          v_worker, p_token, v_start, clock_timestamp(), p_error);
  if jsonb_array_length(coalesce(p_log, '[]')) > 0 then
    insert into runner.task_log_lines (ti_id, try_number, at, level, message)
    select p_ti_id, v_try, x.at, x.level, x.message
      from jsonb_to_recordset(p_log) as x(at timestamptz, level text, message text);
  end if;

  return query select true, v_state, runner.apply_task_outcome(p_ti_id, p_skip);
end $$;

-- The reaper's takeover of a try whose lease lapsed: the try is lost (retried or failed like
-- any failure) and graphile-worker's lock on the dead job is cleared by deleting the job, so it
-- is not run again when graphile's own 4-hour lock timeout passes.
create function runner.take_over_lost_try(p_ti_id bigint, p_token uuid, p_retry_delay_ms integer, p_reason text)
returns table (accepted boolean, task_state text, retry_in_ms double precision)
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_job bigint;
  v_result record;
begin
  select job_id into v_job from runner.task_instances where id = p_ti_id;
  select * into v_result
    from runner.finish_task_try(p_ti_id, p_token, 'lost', p_reason, true, p_retry_delay_ms, null, null, true) f;
  if v_result.accepted then
    delete from graphile_worker._private_jobs where id = v_job and locked_at is not null;
  end if;
  return query select v_result.accepted, v_result.task_state, v_result.retry_in_ms;
end $$;

-- A runner process whose heartbeat stopped is dead: release every graphile-worker job it had
-- locked (a job fetched but not yet claimed, or finished but not yet completed, would otherwise
-- wait out graphile's 4-hour lock). Its running tries are taken over by their leases; a
-- released job of one of those is refused at claim, so nothing runs twice.
create function runner.release_dead_workers_jobs(p_dead_after_seconds integer, p_self text)
returns integer language plpgsql as $$
declare
  v_ids text[];
  v_released integer;
begin
  with dead as (
    update runner.heartbeats
       set graphile_worker_ids = '{}'
     where last_beat_at < clock_timestamp() - make_interval(secs => p_dead_after_seconds)
       and graphile_worker_ids <> '{}' and worker_id <> p_self
    returning graphile_worker_ids
  )
  select array_agg(id) into v_ids from dead, unnest(dead.graphile_worker_ids) as u(id);
  if v_ids is null then
    return 0;
  end if;
  select count(*) into v_released from graphile_worker._private_jobs where locked_by = any(v_ids);
  perform graphile_worker.force_unlock_workers(v_ids);
  if v_released > 0 then
    perform pg_notify('jobs:insert', json_build_object('count', v_released)::text);
  end if;
  return v_released;
end $$;

-- A waiting trigger: create the child run and defer, in one transaction. The task then holds no
-- worker; the child's completion enqueues runner_resume. Returns null when the fence refuses.
create function runner.defer_to_child_run(
  p_ti_id bigint, p_token uuid, p_child_dag_id text, p_child_run_id text, p_conf jsonb,
  p_tasks jsonb, p_triggered_by text, p_log jsonb)
returns bigint language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_child_pk bigint;
  v_try integer;
  v_worker text;
  v_start timestamptz;
begin
  select try_number, worker, start_date into v_try, v_worker, v_start from runner.task_instances
   where id = p_ti_id and attempt_token = p_token and state = 'running' for update;
  if not found then
    return null;
  end if;
  v_child_pk := runner.create_run(p_child_dag_id, p_child_run_id, 'triggered', p_triggered_by, p_conf,
                                  clock_timestamp(), null, p_tasks, p_ti_id);
  update runner.task_instances
     set state = 'deferred', lease_expires_at = null,
         child_dag_id = p_child_dag_id, child_run_id = p_child_run_id, child_run_pk = v_child_pk
   where id = p_ti_id;
  insert into runner.task_tries (ti_id, try_number, state, worker, attempt_token, start_date)
  values (p_ti_id, v_try, 'deferred', v_worker, p_token, v_start);
  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  select p_ti_id, v_try, x.at, x.level, x.message
    from jsonb_to_recordset(coalesce(p_log, '[]')) as x(at timestamptz, level text, message text);
  return v_child_pk;
end $$;

-- The child run of a deferred waiting trigger ended: the trigger succeeds or fails with it.
create function runner.resume_deferred_task(p_ti_id bigint, p_child_run_pk bigint, p_retry_delay_ms integer)
returns table (accepted boolean, task_state text, retry_in_ms double precision, resume_latency_ms double precision)
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_run_pk bigint;
  v_run_open boolean;
  v_child runner.dag_runs;
  v_try integer;
  v_state text;
  v_message text;
begin
  select run_pk into v_run_pk from runner.task_instances where id = p_ti_id;
  perform pg_advisory_xact_lock(v_run_pk);
  select state not in ('success', 'failed') into v_run_open from runner.dag_runs where id = v_run_pk;
  select * into v_child from runner.dag_runs where id = p_child_run_pk;
  v_message := format('child run %s of DAG %s ended %s', v_child.run_id, v_child.dag_id, v_child.state);

  update runner.task_instances ti
     set state = case
                   when v_child.state = 'success' then 'success'
                   when v_run_open and ti.try_number < ti.max_tries then 'up_for_retry'
                   else 'failed'
                 end,
         end_date = clock_timestamp(),
         error = case when v_child.state = 'success' then null else v_message end,
         next_retry_at = case when v_child.state <> 'success' and v_run_open and ti.try_number < ti.max_tries
                              then clock_timestamp() + make_interval(secs => p_retry_delay_ms / 1000.0) end,
         queued_at = case when v_child.state <> 'success' and v_run_open and ti.try_number < ti.max_tries
                          then clock_timestamp() + make_interval(secs => p_retry_delay_ms / 1000.0) else ti.queued_at end
   where ti.id = p_ti_id and ti.state = 'deferred' and ti.child_run_pk = p_child_run_pk
     and v_child.state in ('success', 'failed')
  returning ti.try_number, ti.state into v_try, v_state;
  if not found then
    return query select false, ti.state, null::double precision, null::double precision
                   from runner.task_instances ti where ti.id = p_ti_id;
    return;
  end if;

  update runner.task_tries
     set state = case when v_state = 'success' then 'success' else 'failed' end,
         end_date = clock_timestamp(), error = case when v_state = 'success' then null else v_message end
   where ti_id = p_ti_id and try_number = v_try;
  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  values (p_ti_id, v_try, clock_timestamp(), case when v_state = 'success' then 'info' else 'error' end, v_message);

  return query select true, v_state, runner.apply_task_outcome(p_ti_id, null),
                      extract(epoch from clock_timestamp() - v_child.end_date)::double precision * 1000;
end $$;
