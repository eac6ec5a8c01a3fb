-- The run/task state machine as SQL functions, so that every transition is one round trip and
-- one transaction: a task's successors are enqueued (graphile_worker.add_jobs) in the same
-- transaction that records its success, and the next queued run starts in the transaction that
-- ends the previous one. Decisions that need the DAG definition (retry delays, branch targets)
-- are made in TypeScript and passed in.
--
-- Every lookup on the hot path goes by primary key (task instance ids, arrays of them), so the
-- generic plan is always right; force_generic_plan (set on the functions TypeScript calls, and
-- inherited by the ones they call) spares re-planning on every call, which otherwise costs more
-- than the statements themselves.
--
-- Locks, always taken in this order: the run's advisory xact lock (its id) serialises every
-- decision about one run's tasks; the per-DAG advisory xact lock (7301, hashtext(dag_id))
-- serialises max_active_runs accounting.

-- Enqueue the graphile jobs that start the next try of each task instance.
create function runner.enqueue_task_jobs(p_ti_ids bigint[], p_run_at timestamptz default null)
returns void language plpgsql as $$
begin
  if coalesce(cardinality(p_ti_ids), 0) = 0 then
    return;
  end if;
  perform graphile_worker.add_jobs(array(
    select row('runner_task', json_build_object('ti', ti.id, 'try', ti.try_number + 1),
               null, p_run_at, 3, null, null, null)::graphile_worker.job_spec
      from runner.task_instances ti
     where ti.id = any(p_ti_ids)
     order by ti.id));
end $$;

-- A run that is terminal never reopens: the guard is in the WHERE clause.
create function runner.complete_run(p_run_pk bigint, p_state text)
returns boolean language plpgsql as $$
declare
  v_run runner.dag_runs;
begin
  update runner.dag_runs
     set state = p_state, end_date = clock_timestamp()
   where id = p_run_pk and state not in ('success', 'failed')
  returning * into v_run;
  if not found then
    return false;
  end if;
  perform pg_notify('runner_run_done',
    json_build_object('dag_id', v_run.dag_id, 'run_id', v_run.run_id, 'state', v_run.state)::text);
  if v_run.parent_ti_id is not null then
    -- wake the waiting trigger that created this run; it holds no worker while it waits
    perform graphile_worker.add_job('runner_resume',
      json_build_object('ti', v_run.parent_ti_id, 'child', v_run.id, 'dag', v_run.parent_dag_id,
                        'task', v_run.parent_task_id,
                        'try', (select try_number from runner.task_instances where id = v_run.parent_ti_id)),
      max_attempts => 5);
  end if;
  perform runner.start_queued_runs(v_run.dag_id);
  return true;
end $$;

-- Success only when every manifest task is terminal (fail closed: a declared task without an
-- instance counts as unfinished). Failures do not come here: fail_run ends a run at once.
create function runner.settle_run(p_run_pk bigint)
returns void language plpgsql as $$
begin
  if exists (select 1 from runner.task_instances
              where run_pk = p_run_pk and state not in ('success', 'failed', 'skipped', 'upstream_failed')) then
    return;
  end if;
  if exists (select 1
               from runner.dag_runs r, unnest(r.manifest) as m(task_id)
              where r.id = p_run_pk
                and not exists (select 1 from runner.task_instances ti
                                 where ti.run_pk = r.id and ti.task_id = m.task_id)) then
    raise warning 'runner: run % holds: a manifest task has no task instance', p_run_pk;
    return;
  end if;
  perform runner.complete_run(p_run_pk, 'success');
end $$;

-- Count the newly terminal task instances against their downstream tasks; start those whose
-- upstream is all done, skip those with a skipped upstream (Airflow's all_success rule), and
-- cascade the skips.
create function runner.release_downstream(p_run_pk bigint, p_done bigint[])
returns void language plpgsql as $$
declare
  v_done bigint[] := p_done;
  v_touched bigint[];
  v_ready bigint[];
begin
  while coalesce(cardinality(v_done), 0) > 0 loop
    with finished as (
      select d.id, count(*) as n, bool_or(f.state = 'skipped') as any_skipped
        from runner.task_instances f, unnest(f.downstream_ids) as d(id)
       where f.id = any(v_done)
       group by d.id
    ), counted as (
      update runner.task_instances ti
         set pending_upstream = ti.pending_upstream - f.n,
             upstream_skipped = ti.upstream_skipped or f.any_skipped
        from finished f
       where ti.id = f.id
      returning ti.id
    )
    select array_agg(id) into v_touched from counted;
    exit when v_touched is null; -- nothing downstream: skip the statement below entirely

    with decided as (
      update runner.task_instances ti
         set state = case when ti.upstream_skipped then 'skipped' else 'queued' end,
             queued_at = case when ti.upstream_skipped then null else clock_timestamp() end,
             end_date = case when ti.upstream_skipped then clock_timestamp() end,
             error = case when ti.upstream_skipped then 'skipped: an upstream task was skipped' end
       where ti.id = any(v_touched) and ti.state = 'scheduled' and ti.pending_upstream = 0
      returning ti.id, ti.state
    )
    select array_agg(id) filter (where state = 'queued'), array_agg(id) filter (where state = 'skipped')
      into v_ready, v_done
      from decided;
    perform runner.enqueue_task_jobs(v_ready);
  end loop;
  perform runner.settle_run(p_run_pk);
end $$;

-- One failure ends the run at once. Downstream of the failed task: upstream_failed. Tasks on
-- other branches that have not started: skipped (they never will). Tasks still running or
-- deferred finish on their own; their results are recorded but start nothing.
create function runner.fail_run(p_run_pk bigint, p_ti_id bigint)
returns void language plpgsql as $$
declare
  v_task_id text;
begin
  select task_id into v_task_id from runner.task_instances where id = p_ti_id;
  with recursive downstream(id) as (
    select d.id from runner.task_instances f, unnest(f.downstream_ids) as d(id) where f.id = p_ti_id
    union
    select d.id from downstream x join runner.task_instances f on f.id = x.id, unnest(f.downstream_ids) as d(id)
  )
  update runner.task_instances ti
     set state = 'upstream_failed', end_date = clock_timestamp(),
         error = format('upstream task %s failed', v_task_id)
   where ti.id in (select id from downstream)
     and ti.state in ('scheduled', 'queued', 'up_for_retry');

  update runner.task_instances
     set state = 'skipped', end_date = clock_timestamp(),
         error = format('not started: the run failed at task %s', v_task_id)
   where run_pk = p_run_pk and state in ('scheduled', 'queued', 'up_for_retry');

  perform runner.complete_run(p_run_pk, 'failed');
end $$;

create function runner.start_run(p_run_pk bigint)
returns void language plpgsql as $$
declare
  v_roots bigint[];
begin
  update runner.dag_runs set state = 'running', start_date = clock_timestamp()
   where id = p_run_pk and state = 'queued';
  if not found then
    return;
  end if;
  with roots as (
    update runner.task_instances
       set state = 'queued', queued_at = clock_timestamp()
     where run_pk = p_run_pk and state = 'scheduled' and pending_upstream = 0
    returning id
  )
  select array_agg(id) into v_roots from roots;
  perform runner.enqueue_task_jobs(v_roots);
  perform runner.settle_run(p_run_pk); -- a run with no tasks is done at once
end $$;

-- Start queued runs in trigger order while the DAG is unpaused and under max_active_runs.
create function runner.start_queued_runs(p_dag_id text)
returns void language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_max integer;
  v_paused boolean;
  v_active integer;
  v_next bigint;
begin
  perform pg_advisory_xact_lock(7301, hashtext(p_dag_id));
  select max_active_runs, is_paused into v_max, v_paused from runner.dags where dag_id = p_dag_id;
  if not found or v_paused then
    return;
  end if;
  loop
    select count(*) into v_active from runner.dag_runs where dag_id = p_dag_id and state = 'running';
    exit when v_active >= v_max;
    select id into v_next from runner.dag_runs
     where dag_id = p_dag_id and state = 'queued' order by id limit 1;
    exit when not found;
    perform runner.start_run(v_next);
  end loop;
end $$;

-- p_tasks: [{"task_id": ..., "upstream": [...], "downstream": [...], "max_tries": n}, ...] in
-- manifest order. Raises unique_violation (23505) on a duplicate run id.
create function runner.create_run(
  p_dag_id text, p_run_id text, p_run_type text, p_triggered_by text, p_conf jsonb,
  p_logical_date timestamptz, p_note text, p_tasks jsonb, p_parent_ti_id bigint)
returns bigint language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_run_pk bigint;
  v_parent_dag text;
  v_parent_run text;
  v_parent_task text;
begin
  if p_parent_ti_id is not null then
    select r.dag_id, r.run_id, ti.task_id into v_parent_dag, v_parent_run, v_parent_task
      from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
     where ti.id = p_parent_ti_id;
  end if;
  insert into runner.dag_runs (dag_id, run_id, state, run_type, triggered_by, conf, logical_date, note,
                               manifest, parent_dag_id, parent_run_id, parent_task_id, parent_ti_id)
  values (p_dag_id, p_run_id, 'queued', p_run_type, p_triggered_by, p_conf, p_logical_date, p_note,
          array(select t ->> 'task_id' from jsonb_array_elements(p_tasks) as t),
          v_parent_dag, v_parent_run, v_parent_task, p_parent_ti_id)
  returning id into v_run_pk;

  insert into runner.task_instances (run_pk, task_id, upstream, downstream, pending_upstream, state, max_tries)
  select v_run_pk, t ->> 'task_id',
         array(select jsonb_array_elements_text(t -> 'upstream')),
         array(select jsonb_array_elements_text(t -> 'downstream')),
         jsonb_array_length(t -> 'upstream'), 'scheduled', (t ->> 'max_tries')::integer
    from jsonb_array_elements(p_tasks) as t;
  update runner.task_instances ti
     set downstream_ids = array(select d.id from runner.task_instances d
                                 where d.run_pk = v_run_pk and d.task_id = any(ti.downstream) order by d.id)
   where ti.run_pk = v_run_pk and cardinality(ti.downstream) > 0;

  perform runner.start_queued_runs(p_dag_id);
  return v_run_pk;
end $$;

-- What follows from a task instance's new state: successors, a retry job, or a failed run.
-- Returns the retry delay in ms when a retry was scheduled. Caller holds the run's lock.
create function runner.apply_task_outcome(p_ti_id bigint, p_skip text[])
returns double precision language plpgsql as $$
declare
  v_ti runner.task_instances;
  v_run_state text;
  v_skipped bigint[];
begin
  select * into v_ti from runner.task_instances where id = p_ti_id;
  select state into v_run_state from runner.dag_runs where id = v_ti.run_pk;
  if v_run_state in ('success', 'failed') then
    return null; -- a terminal run records late results but starts nothing
  end if;
  if v_ti.state = 'success' then
    if coalesce(cardinality(p_skip), 0) > 0 then
      with skipped as (
        update runner.task_instances ti
           set state = 'skipped', end_date = clock_timestamp(),
               error = format('skipped by branch task %s', v_ti.task_id)
          from unnest(p_skip) as s(task_id)
         where ti.run_pk = v_ti.run_pk and ti.task_id = s.task_id and ti.state = 'scheduled'
        returning ti.id
      )
      select array_agg(id) into v_skipped from skipped;
    end if;
    if cardinality(v_ti.downstream_ids) = 0 and v_skipped is null then
      perform runner.settle_run(v_ti.run_pk); -- a leaf: nothing to release
    else
      perform runner.release_downstream(v_ti.run_pk, array[v_ti.id] || coalesce(v_skipped, '{}'));
    end if;
  elsif v_ti.state = 'up_for_retry' then
    perform runner.enqueue_task_jobs(array[v_ti.id], v_ti.next_retry_at);
    return greatest(0, extract(epoch from v_ti.next_retry_at - clock_timestamp()) * 1000);
  elsif v_ti.state = 'failed' then
    perform runner.fail_run(v_ti.run_pk, v_ti.id);
  end if;
  return null;
end $$;
