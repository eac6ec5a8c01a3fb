-- Operator controls: mark a run failed or success, and clear task instances so they run again in
-- the same run. Both keep history: every try keeps its task_tries row and log; a try that was
-- running when its run was marked gets a row saying so, and its late result is refused (the task
-- instance is no longer 'running', which finish_task_try's fence requires).
--
-- Locks: the run locks of the run and of its open descendants, in id order, then the scheduler lock
-- (7301, 0): the same order as everywhere else (a run's lock before the scheduler lock).

-- The run and every run started, directly or not, by its waiting triggers.
create function runner.run_family(p_run_pk bigint)
returns table (run_pk bigint, depth integer) language sql stable as $$
  with recursive family (id, depth) as (
    select p_run_pk, 0
    union all
    select r.id, f.depth + 1
      from family f join runner.task_instances ti on ti.run_pk = f.id
      join runner.dag_runs r on r.parent_ti_id = ti.id
  )
  select id, depth from family
$$;

-- Ends one open run as p_state ('failed' or 'success'): its unfinished task instances with it.
create function runner.mark_one_run(p_run_pk bigint, p_state text, p_by text)
returns void language plpgsql as $$
declare
  v_note text := format('run marked %s by %s', p_state, p_by);
begin
  -- a try in flight: its task_tries row says it was stopped (a deferred try has one already)
  insert into runner.task_tries (ti_id, try_number, state, worker, attempt_token, start_date, end_date, error)
  select ti.id, ti.try_number, 'failed', ti.worker, ti.attempt_token, ti.start_date, clock_timestamp(),
         format('stopped: %s; this try''s own result will be refused', v_note)
    from runner.task_instances ti
   where ti.run_pk = p_run_pk and ti.state = 'running' and ti.attempt_token is not null
  on conflict (ti_id, try_number) do nothing;
  update runner.task_tries tt
     set state = 'failed', end_date = clock_timestamp(), error = format('stopped: %s', v_note)
    from runner.task_instances ti
   where ti.run_pk = p_run_pk and ti.state = 'deferred' and tt.ti_id = ti.id and tt.try_number = ti.try_number;
  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  select ti.id, ti.try_number, clock_timestamp(), 'warn', v_note
    from runner.task_instances ti
   where ti.run_pk = p_run_pk and ti.state in ('running', 'deferred') and ti.try_number > 0;

  update runner.task_instances ti
     set state = case
                   when p_state = 'success' then 'success'
                   when ti.state in ('running', 'deferred', 'queued', 'up_for_retry') then 'failed'
                   else 'upstream_failed'
                 end,
         end_date = clock_timestamp(), lease_expires_at = null, next_retry_at = null,
         error = case when p_state = 'success' then null else v_note end
   where ti.run_pk = p_run_pk and ti.state in ('scheduled', 'queued', 'running', 'deferred', 'up_for_retry');

  perform runner.complete_run(p_run_pk, p_state);
  update runner.dag_runs set note = coalesce(note || E'\n', '') || v_note where id = p_run_pk;
end $$;

-- Marks a run (and its open descendants, deepest first) failed or success. A terminal run may be
-- marked too: its state changes and nothing runs. Returns false when the run already had p_state.
create function runner.mark_run(p_run_pk bigint, p_state text, p_by text)
returns boolean language plpgsql as $$
declare
  v_member record;
  v_state text;
begin
  if p_state not in ('failed', 'success') then
    raise exception 'a run can be marked failed or success, not %', p_state using errcode = '22023';
  end if;
  for v_member in select run_pk from runner.run_family(p_run_pk) order by run_pk loop
    perform pg_advisory_xact_lock(v_member.run_pk);
  end loop;
  perform pg_advisory_xact_lock(7301, 0);
  select state into v_state from runner.dag_runs where id = p_run_pk;
  if v_state = p_state then
    return false;
  end if;
  if v_state in ('success', 'failed') then
    if p_state = 'success' then
      update runner.task_instances set state = 'success', error = null
       where run_pk = p_run_pk and state in ('failed', 'upstream_failed', 'skipped')
         and (state <> 'skipped' or error like 'not started: the run failed%');
    end if;
    update runner.dag_runs
       set state = p_state, note = coalesce(note || E'\n', '') || format('run marked %s by %s', p_state, p_by)
     where id = p_run_pk;
    return true;
  end if;
  for v_member in
    select f.run_pk from runner.run_family(p_run_pk) f join runner.dag_runs r on r.id = f.run_pk
     where r.state in ('queued', 'running') order by f.depth desc, f.run_pk
  loop
    perform runner.mark_one_run(v_member.run_pk, p_state, p_by);
  end loop;
  return true;
end $$;

-- Clears task instances of a run so they run again in it: the selected ones (p_task_ids, or all
-- when null; only failed/upstream_failed ones when p_only_failed), with their downstream
-- (p_include_downstream) and upstream (p_include_upstream), plus, in a failed run, the tasks that
-- never started because it failed. Running or deferred instances are never cleared. p_tries maps
-- task_id -> tries a clear grants (the DAG's retries + 1). A terminal run returns to queued and
-- starts again through the scheduler (so it takes its exclusive resources again); a running one
-- enqueues the cleared tasks that are ready. Returns the cleared instances' ids (with p_dry_run,
-- the ones that would be cleared, changing nothing).
create function runner.clear_task_instances(
  p_run_pk bigint, p_task_ids text[], p_only_failed boolean, p_include_downstream boolean,
  p_include_upstream boolean, p_tries jsonb, p_by text, p_dry_run boolean)
returns setof bigint language plpgsql as $$
declare
  v_run runner.dag_runs;
  v_ids bigint[];
  v_ready bigint[];
begin
  perform pg_advisory_xact_lock(p_run_pk);
  perform pg_advisory_xact_lock(7301, 0);
  select * into v_run from runner.dag_runs where id = p_run_pk;

  with recursive base as (
    select ti.id from runner.task_instances ti
     where ti.run_pk = p_run_pk
       and (p_task_ids is null or ti.task_id = any(p_task_ids))
       and (not p_only_failed or ti.state in ('failed', 'upstream_failed'))
  ), down (id) as (
    select id from base where p_include_downstream
    union
    select d.id from down x join runner.task_instances f on f.id = x.id, unnest(f.downstream_ids) as d(id)
  ), up (id) as (
    select id from base where p_include_upstream
    union
    select u.id from up x join runner.task_instances f on f.id = x.id
      join runner.task_instances u on u.run_pk = f.run_pk and u.task_id = any(f.upstream)
  ), never_started as (
    select ti.id from runner.task_instances ti
     where ti.run_pk = p_run_pk and v_run.state = 'failed' and ti.try_number = 0
       and ti.state in ('skipped', 'upstream_failed')
  )
  select array_agg(distinct ti.id order by ti.id) into v_ids
    from runner.task_instances ti
   where ti.id in (select id from base union select id from down union select id from up union select id from never_started)
     and ti.state not in ('running', 'deferred');

  if v_ids is null or p_dry_run then
    return query select unnest(coalesce(v_ids, '{}'));
    return;
  end if;

  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  select ti.id, ti.try_number, clock_timestamp(), 'info',
         format('cleared by %s (was %s); the next try is %s', p_by, ti.state, ti.try_number + 1)
    from runner.task_instances ti
   where ti.id = any(v_ids) and ti.try_number > 0;

  update runner.task_instances ti
     set state = 'scheduled', start_date = null, end_date = null, error = null, worker = null,
         lease_expires_at = null, next_retry_at = null, queued_at = null, job_id = null,
         child_dag_id = null, child_run_id = null, child_run_pk = null, upstream_skipped = false,
         max_tries = ti.try_number + coalesce((p_tries ->> ti.task_id)::integer, 1)
   where ti.id = any(v_ids);
  update runner.task_instances ti
     set pending_upstream = (select count(*) from runner.task_instances u
                              where u.run_pk = ti.run_pk and u.task_id = any(ti.upstream)
                                and u.state not in ('success', 'skipped')),
         upstream_skipped = exists (select 1 from runner.task_instances u
                                     where u.run_pk = ti.run_pk and u.task_id = any(ti.upstream) and u.state = 'skipped')
   where ti.id = any(v_ids);

  if v_run.state in ('success', 'failed') then
    update runner.dag_runs
       set state = 'queued', end_date = null, waiting_for = null,
           note = coalesce(note || E'\n', '') || format('cleared by %s: %s task(s) run again', p_by, cardinality(v_ids))
     where id = p_run_pk;
    perform runner.start_queued_runs(v_run.dag_id);
  else
    with ready as (
      update runner.task_instances ti
         set state = 'queued', queued_at = clock_timestamp()
       where ti.id = any(v_ids) and ti.pending_upstream = 0 and not ti.upstream_skipped
      returning ti.id
    )
    select array_agg(id) into v_ready from ready;
    perform runner.enqueue_task_jobs(v_ready);
  end if;
  return query select unnest(v_ids);
end $$;
